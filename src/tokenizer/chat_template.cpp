#include "tokenizer/chat_template.h"

#include "core/error.h"
#include "tokenizer/jinja/template.h"

namespace vellum::tokenizer {

namespace {

// The interpreter reports everything as vellum::Error; anything else escaping it is our bug, but a
// template is user input, so it still becomes an error for the caller rather than a crash.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("chat template: out of memory");
  } catch (const std::exception& e) {
    throw_error("chat template: internal error: {}", e.what());
  }
}

}  // namespace

ChatTemplate::ChatTemplate(std::string source) : source_(std::move(source)) {
  template_ = guarded([&] { return std::make_unique<jinja::Template>(source_); });
}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render_context(const nlohmann::ordered_json& context) const {
  jinja::RenderOptions options;
  options.now = now_;
  return guarded([&] { return template_->render(context, options); });
}

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                 bool add_generation_prompt, const std::string& bos, const std::string& eos,
                                 const nlohmann::ordered_json& extra) const {
  if (!messages.is_array()) throw_error("chat template: messages must be a JSON array");
  if (!tools.is_null() && !tools.is_array()) throw_error("chat template: tools must be a JSON array");
  if (!extra.is_null() && !extra.is_object()) throw_error("chat template: extra context must be a JSON object");
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = messages;
  if (tools.is_array() && !tools.empty()) context["tools"] = tools;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = bos;
  context["eos_token"] = eos;
  if (extra.is_object()) {
    for (auto it = extra.begin(); it != extra.end(); ++it) context[it.key()] = it.value();
  }
  return render_context(context);
}

std::string ChatTemplate::render(const nlohmann::json& messages, const nlohmann::json& tools,
                                 bool add_generation_prompt, const std::string& bos, const std::string& eos,
                                 const nlohmann::json& extra) const {
  // Different basic_json specializations do not convert directly; key order is already lost here anyway.
  auto convert = [](const nlohmann::json& j) { return nlohmann::ordered_json::parse(j.dump()); };
  return render(convert(messages), convert(tools), add_generation_prompt, bos, eos, convert(extra));
}

}  // namespace vellum::tokenizer
