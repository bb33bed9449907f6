#pragma once
// A model's chat template (the Jinja text in `tokenizer.chat_template`), parsed once and rendered
// per request the way Hugging Face's apply_chat_template renders it: jinja2 with trim_blocks and
// lstrip_blocks, loop controls, `{% generation %}` as a plain block, `tojson` without ASCII
// escaping, `raise_exception(msg)` and `strftime_now(fmt)`. See docs/chat-templates.md.
//
// Errors are vellum::Error: a malformed template when constructed; when rendering, the template's
// own raise_exception message (jinja::TemplateRaised) or an evaluation error naming the line.
// Rendering is bounded (steps, depth, output size), so a hostile template cannot hang or crash.

#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace vellum::jinja {
class Template;
}

namespace vellum::tokenizer {

class ChatTemplate {
 public:
  explicit ChatTemplate(std::string source);
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // messages: [{"role", "content", "tool_calls"?…}]; tools: a JSON array, or null/empty for none
  // (then `tools` is left undefined, as llama.cpp and our fixtures do); extra: more variables
  // (e.g. {"enable_thinking": false}), which may override the others.
  // Pass ordered_json where you can: key order shows up in `tojson` and `|items` output.
  std::string render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                     bool add_generation_prompt, const std::string& bos, const std::string& eos,
                     const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;
  std::string render(const nlohmann::json& messages, const nlohmann::json& tools, bool add_generation_prompt,
                     const std::string& bos, const std::string& eos,
                     const nlohmann::json& extra = nlohmann::json::object()) const;

  // Renders with exactly these variables (messages, bos_token, …): what the fixture tests use.
  std::string render_context(const nlohmann::ordered_json& context) const;

  // strftime_now() returns this instant (formatted as UTC) instead of the local time now.
  void set_now(std::optional<std::time_t> now) { now_ = now; }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::unique_ptr<jinja::Template> template_;
  std::optional<std::time_t> now_;
};

}  // namespace vellum::tokenizer
