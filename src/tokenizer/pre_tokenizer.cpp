#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace vellum::tokenizer {

namespace {

// GPT-2's pattern (tiktoken r50k), used by ByteLevel(use_regex=true).
constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// Llama 3 (tiktoken cl100k): case-insensitive contractions, numbers in groups of up to three.
constexpr const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2/Qwen3: as Llama 3 but single digits.
constexpr const char* kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kTekken =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kBloom = R"( ?[^(\s|.,!?…。，、।۔،)]+)";
constexpr const char* kCjk = "[一-龥ࠀ-一가-퟿]+";

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  for (auto n : names) {
    if (s == n) return true;
  }
  return false;
}

struct Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
};

}  // namespace

std::vector<std::string> PreTokenizer::patterns_for(std::string_view pre) {
  if (is_one_of(pre, {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "dbrx", "smaug-bpe",
                      "chatglm-bpe", "midm-2.0"})) {
    return {kLlama3};
  }
  if (is_one_of(pre, {"qwen2", "qwen2.5", "qwen-2.5", "deepseek-r1-qwen", "stablelm2", "megrez", "hunyuan"})) {
    return {kQwen2};
  }
  if (is_one_of(pre, {"gpt-2", "phi-2", "mpt", "olmo", "jais", "jina-es", "jina-de", "gigachat", "jina-v1-en",
                      "jina-v2-es", "jina-v2-de", "jina-v2-code", "roberta-bpe", "trillion"})) {
    return {kGpt2};
  }
  if (is_one_of(pre, {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"})) {
    return {R"(\p{N})", kGpt2};
  }
  if (pre == "falcon") return {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"};
  if (pre == "deepseek-llm") {
    return {
        "[\r\n]",
        "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        kCjk,
        "\\p{N}+",
    };
  }
  if (pre == "deepseek-coder") return {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"};
  if (pre == "deepseek-v3") {
    return {R"(\p{N}{1,3})", "[一-龥぀-ゟ゠-ヿ]+",
            R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
  }
  if (is_one_of(pre, {"poro-chat", "bloom", "gpt3-finnish"})) return {kBloom};
  if (pre == "viking") return {kBloom, R"(\p{N})"};
  if (pre == "tekken") return {kTekken};
  if (is_one_of(pre, {"gpt-4o", "llama4"})) return {kGpt4o};
  if (pre == "default") {
    // llama.cpp's fallback for BPE vocabularies that name no pre-tokenizer.
    return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  }
  throw_error("tokenizer.ggml.pre: unknown pre-tokenizer '{}'", pre);
}

struct PreTokenizer::Impl {
  std::vector<Compiled> regexes;
  ~Impl() {
    for (auto& r : regexes) pcre2_code_free(r.code);
  }
};

PreTokenizer::PreTokenizer(const std::vector<std::string>& patterns) : impl_(std::make_unique<Impl>()) {
  for (const auto& p : patterns) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof(msg));
      throw_error("pre-tokenizer regex '{}': {} at offset {}", p, reinterpret_cast<const char*>(msg), offset);
    }
    Compiled c{code, pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0};
    impl_->regexes.push_back(c);
  }
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

size_t PreTokenizer::pattern_count() const { return impl_->regexes.size(); }

namespace {

// Per-thread match state: a one-pair ovector is enough, only the whole match is used.
struct MatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
  MatchState() {
    if (stack != nullptr) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

// Splits every piece in `in` by `re`, appending matches and the gaps between them to `out`.
void split_one(const Compiled& re, const std::vector<std::string_view>& in, std::vector<std::string_view>& out,
               MatchState& state) {
  for (std::string_view piece : in) {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
    const size_t n = piece.size();
    size_t last = 0;   // end of what has been emitted
    size_t start = 0;  // where the next search begins
    while (start < n) {
      const int rc = re.jit ? pcre2_jit_match(re.code, subject, n, start, 0, state.data, state.context)
                            : pcre2_match(re.code, subject, n, start, 0, state.data, state.context);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof(msg));
        throw_error("pre-tokenizer: regex match failed: {}", reinterpret_cast<const char*>(msg));
      }
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(state.data);
      const size_t ms = ov[0], me = ov[1];
      if (me <= ms) {
        // An empty match cuts nothing: search again one character further on.
        if (ms >= n) break;
        start = ms + std::max<size_t>(1, std::min(n - ms, unicode::sequence_length(static_cast<uint8_t>(piece[ms]))));
        continue;
      }
      if (ms > last) out.push_back(piece.substr(last, ms - last));
      out.push_back(piece.substr(ms, me - ms));
      last = start = me;
    }
    if (last < n) out.push_back(piece.substr(last));
  }
}

}  // namespace

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
  if (text.empty()) return;
  thread_local MatchState state;
  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (const auto& re : impl_->regexes) {
    next.clear();
    split_one(re, current, next, state);
    current.swap(next);
  }
  out.insert(out.end(), current.begin(), current.end());
}

}  // namespace vellum::tokenizer
