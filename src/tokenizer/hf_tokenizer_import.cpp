#include "tokenizer/hf_tokenizer_import.h"

#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/vocab.h"

namespace vellum::tokenizer {

namespace {

using nlohmann::json;

constexpr const char* kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error("{}: cannot open", path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::exception& e) {
    throw_error("{}: invalid JSON: {}", path.string(), e.what());
  }
}

// The regexes a tokenizer.json pre-tokenizer applies, in order, as PreTokenizer patterns.
void collect_patterns(const json& pt, std::vector<std::string>& out) {
  if (!pt.is_object()) return;
  const std::string type = pt.value("type", "");
  if (type == "Sequence") {
    for (const auto& p : pt.value("pretokenizers", json::array())) collect_patterns(p, out);
  } else if (type == "Split") {
    const auto& pattern = pt.at("pattern");
    if (pattern.contains("Regex")) {
      out.push_back(pattern.at("Regex").get<std::string>());
    } else if (pattern.contains("String")) {
      out.push_back("\\Q" + pattern.at("String").get<std::string>() + "\\E");
    }
  } else if (type == "ByteLevel") {
    if (pt.value("use_regex", true)) out.push_back(kGpt2Regex);
  } else if (type == "Digits") {
    out.push_back(pt.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)");
  } else if (type == "Punctuation") {
    out.push_back(R"([\p{P}\$\+<=>\^~\|`]+)");
  } else {
    throw_error("tokenizer.json: unsupported pre-tokenizer type '{}'", type);
  }
}

bool has_byte_level(const json& j) {
  if (j.is_object()) {
    if (j.value("type", "") == "ByteLevel") return true;
    for (const auto& [k, v] : j.items()) {
      if (has_byte_level(v)) return true;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (has_byte_level(v)) return true;
    }
  }
  return false;
}

// convert_hf_to_gguf.py's does_token_look_special().
bool looks_special(const std::string& t) {
  auto starts = [&](std::string_view p) { return t.size() >= p.size() && t.compare(0, p.size(), p) == 0; };
  auto ends = [&](std::string_view s) { return t.size() >= s.size() && t.compare(t.size() - s.size(), s.size(), s) == 0; };
  if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
  if (starts("<|") && ends("|>")) return true;
  if (starts("<｜") && ends("｜>")) return true;
  if (starts("<unused") && ends(">")) return true;
  return false;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

// A config entry such as "bos_token": "<s>" or {"content": "<s>", ...}.
std::optional<std::string> token_content(const json& config, const std::string& key) {
  if (!config.contains(key)) return std::nullopt;
  const auto& e = config.at(key);
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object() && e.contains("content") && e.at("content").is_string()) return e.at("content").get<std::string>();
  return std::nullopt;
}

// The TemplateProcessing post-processor, directly or inside a Sequence.
const json* template_processing(const json& pp) {
  if (!pp.is_object()) return nullptr;
  if (pp.value("type", "") == "TemplateProcessing") return &pp;
  if (pp.value("type", "") == "Sequence") {
    for (const auto& p : pp.value("processors", json::array())) {
      if (const json* t = template_processing(p)) return t;
    }
  }
  return nullptr;
}

}  // namespace

std::string detect_pre_tokenizer(const json& pre_tokenizer) {
  std::vector<std::string> patterns;
  collect_patterns(pre_tokenizer, patterns);
  static const char* kCandidates[] = {"llama-bpe", "qwen2",      "gpt-2",  "starcoder", "deepseek-coder",
                                      "deepseek-llm", "falcon",  "tekken", "gpt-4o",    "deepseek-v3",
                                      "bloom",     "viking"};
  for (const char* name : kCandidates) {
    if (PreTokenizer::patterns_for(name) == patterns) return name;
  }
  std::string listed;
  for (const auto& p : patterns) listed += (listed.empty() ? "" : ", ") + p;
  throw_error("tokenizer.json: pre-tokenizer not recognised (regexes: {})", listed.empty() ? "none" : listed);
}

gguf::Metadata import_hf_tokenizer(const json& tok, const json* config) {
  if (!tok.is_object() || !tok.contains("model")) throw_error("tokenizer.json: no \"model\"");
  const json& model = tok.at("model");
  const std::string model_type = model.value("type", "");
  if (model_type != "BPE") throw_error("tokenizer.json: model type '{}' is not supported (only BPE)", model_type);
  if (!has_byte_level(tok.value("pre_tokenizer", json())) && !has_byte_level(tok.value("decoder", json()))) {
    throw_error("tokenizer.json: only byte-level BPE is supported (no ByteLevel pre-tokenizer or decoder)");
  }
  if (!model.contains("vocab") || !model.at("vocab").is_object()) throw_error("tokenizer.json: model.vocab missing");

  // id -> text, and which ids are added tokens.
  std::map<int64_t, std::string> by_id;
  for (const auto& [text, id] : model.at("vocab").items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) throw_error("tokenizer.json: bad id for token '{}'", text);
    by_id[id.get<int64_t>()] = text;
  }
  struct Added {
    std::string content;
    bool special = false;
  };
  std::unordered_map<int64_t, Added> added;
  const json added_tokens = tok.value("added_tokens", json::array());
  for (const auto& a : added_tokens) {
    const int64_t id = a.at("id").get<int64_t>();
    if (id < 0) throw_error("tokenizer.json: added token with negative id");
    added[id] = {a.at("content").get<std::string>(), a.value("special", false)};
    by_id[id] = a.at("content").get<std::string>();
  }
  if (by_id.empty()) throw_error("tokenizer.json: empty vocabulary");
  const int64_t n = by_id.rbegin()->first + 1;
  if (n > 16 * 1024 * 1024) throw_error("tokenizer.json: token id {} is implausibly large", n - 1);

  std::vector<std::string> tokens(static_cast<size_t>(n));
  std::vector<int32_t> types(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto& text = tokens[static_cast<size_t>(i)];
    auto& type = types[static_cast<size_t>(i)];
    const auto it = by_id.find(i);
    if (it == by_id.end()) {
      text = "[PAD" + std::to_string(i) + "]";
      type = static_cast<int32_t>(TokenType::Unused);
      continue;
    }
    text = it->second;
    const auto a = added.find(i);
    if (a == added.end()) {
      type = static_cast<int32_t>(TokenType::Normal);
    } else if (a->second.special || looks_special(text)) {
      type = static_cast<int32_t>(TokenType::Control);
    } else {
      text = replace_all(text, "\xe2\x96\x81", " ");  // user-defined tokens are stored pre-normalized
      type = static_cast<int32_t>(TokenType::UserDefined);
    }
  }

  std::vector<std::string> merges;
  if (model.contains("merges")) {
    for (const auto& m : model.at("merges")) {
      if (m.is_string()) {
        merges.push_back(m.get<std::string>());
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        // Pair format (transformers >= 4.45): spaces inside a part are written as U+0120, as gguf-py does.
        merges.push_back(replace_all(m[0].get<std::string>(), " ", "\xc4\xa0") + " " +
                         replace_all(m[1].get<std::string>(), " ", "\xc4\xa0"));
      } else {
        throw_error("tokenizer.json: unknown merges format");
      }
    }
  }
  if (merges.empty()) throw_error("tokenizer.json: BPE model without merges");

  gguf::Metadata md;
  md.set("tokenizer.ggml.model", gguf::Value::string("gpt2"));
  md.set("tokenizer.ggml.pre", gguf::Value::string(detect_pre_tokenizer(tok.value("pre_tokenizer", json()))));
  md.set("tokenizer.ggml.tokens", gguf::Value::string_array(tokens));
  md.set("tokenizer.ggml.token_type", gguf::Value::i32_array(types));
  md.set("tokenizer.ggml.merges", gguf::Value::string_array(merges));

  // Special tokens: ids of the config's token strings among the added tokens (first match).
  auto added_id = [&](const std::string& content) -> std::optional<int64_t> {
    for (const auto& a : added_tokens) {
      if (a.value("content", "") == content) return a.at("id").get<int64_t>();
    }
    return std::nullopt;
  };
  std::optional<bool> add_bos, add_eos;
  std::map<std::string, int64_t> ids;
  if (const json* tp = template_processing(tok.value("post_processor", json()))) {
    const json single = tp->value("single", json::array());
    auto special_id = [&](const json& piece) -> std::optional<int64_t> {
      if (!piece.is_object() || !piece.contains("SpecialToken")) return std::nullopt;
      return added_id(piece.at("SpecialToken").value("id", ""));
    };
    if (!single.empty()) {
      if (auto id = special_id(single.front())) {
        add_bos = true;
        ids["bos"] = *id;
      }
      if (single.size() > 1) {
        if (auto id = special_id(single.back())) {
          add_eos = true;
          ids["eos"] = *id;
        }
      }
    }
  }
  if (config != nullptr && config->is_object()) {
    for (const std::string typ : {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}) {
      if (const auto content = token_content(*config, typ + "_token")) {
        if (const auto id = added_id(*content)) ids[typ] = *id;
      }
    }
    if (config->contains("add_bos_token") && config->at("add_bos_token").is_boolean()) {
      add_bos = config->at("add_bos_token").get<bool>();
    }
    if (config->contains("add_eos_token") && config->at("add_eos_token").is_boolean()) {
      add_eos = config->at("add_eos_token").get<bool>();
    }
  }
  static const std::map<std::string, std::string> kKeys = {
      {"bos", "tokenizer.ggml.bos_token_id"},       {"eos", "tokenizer.ggml.eos_token_id"},
      {"unk", "tokenizer.ggml.unknown_token_id"},   {"sep", "tokenizer.ggml.seperator_token_id"},
      {"pad", "tokenizer.ggml.padding_token_id"},   {"cls", "tokenizer.ggml.cls_token_id"},
      {"mask", "tokenizer.ggml.mask_token_id"}};
  for (const std::string typ : {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}) {
    const auto it = ids.find(typ);
    if (it != ids.end()) md.set(kKeys.at(typ), gguf::Value::u32(static_cast<uint32_t>(it->second)));
  }
  if (add_bos) md.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(*add_bos));
  if (add_eos) md.set("tokenizer.ggml.add_eos_token", gguf::Value::boolean(*add_eos));

  if (config != nullptr && config->is_object() && config->contains("chat_template")) {
    const json& ct = config->at("chat_template");
    if (ct.is_string()) {
      md.set("tokenizer.chat_template", gguf::Value::string(ct.get<std::string>()));
    } else if (ct.is_array()) {
      // Named templates: "default" is tokenizer.chat_template, the others tokenizer.chat_template.NAME.
      for (const auto& t : ct) {
        if (!t.is_object() || !t.contains("name") || !t.contains("template")) continue;
        const std::string name = t.at("name").get<std::string>();
        const std::string key = name == "default" ? "tokenizer.chat_template" : "tokenizer.chat_template." + name;
        md.set(key, gguf::Value::string(t.at("template").get<std::string>()));
      }
    }
  }
  return md;
}

gguf::Metadata import_hf_tokenizer_files(const std::filesystem::path& tokenizer_json,
                                         const std::optional<std::filesystem::path>& tokenizer_config) {
  const json tok = read_json(tokenizer_json);
  std::optional<json> config;
  if (tokenizer_config) config = read_json(*tokenizer_config);
  try {
    return import_hf_tokenizer(tok, config ? &*config : nullptr);
  } catch (const json::exception& e) {
    throw_error("{}: unexpected structure: {}", tokenizer_json.string(), e.what());
  }
}

void write_tokenizer_gguf(const gguf::Metadata& metadata, const std::filesystem::path& out) {
  gguf::GgufWriter writer;
  for (const auto& [key, value] : metadata.entries()) writer.metadata().set(key, value);
  writer.write(out.string());
}

}  // namespace vellum::tokenizer
