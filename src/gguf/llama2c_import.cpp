#include "gguf/llama2c_import.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/mapped_file.h"
#include "gguf/file_type.h"
#include "gguf/gguf_writer.h"
#include "quant/quant.h"

namespace vellum::gguf {
namespace {

constexpr int32_t kUnk = 0, kBos = 1, kEos = 2;
// llama.cpp's token types
constexpr int32_t kTypeNormal = 1, kTypeUnknown = 2, kTypeControl = 3, kTypeByte = 6;

Llama2cConfig parse_header(std::span<const uint8_t> bytes, const std::string& path) {
  if (bytes.size() < 28) throw_error("{}: too small for a llama2.c checkpoint ({} bytes)", path, bytes.size());
  int32_t h[7];
  std::memcpy(h, bytes.data(), sizeof h);
  if (std::memcmp(bytes.data(), "ak42", 4) == 0) {
    throw_error("{}: llama2.c 'ak42' (version 1/2) exports are not supported; use the legacy export", path);
  }
  Llama2cConfig c{h[0], h[1], h[2], h[3], h[4], h[5], h[6], true};
  if (c.vocab_size < 0) {
    c.shared_classifier = false;
    c.vocab_size = -c.vocab_size;
  }
  auto positive = [&](const char* what, int32_t v, int32_t max) {
    if (v <= 0 || v > max) throw_error("{}: header {} = {} (expected 1 to {})", path, what, v, max);
  };
  positive("dim", c.dim, 1 << 16);
  positive("hidden_dim", c.hidden_dim, 1 << 18);
  positive("n_layers", c.n_layers, 1024);
  positive("n_heads", c.n_heads, 1024);
  positive("n_kv_heads", c.n_kv_heads, 1024);
  positive("vocab_size", c.vocab_size, 1 << 22);
  positive("seq_len", c.seq_len, 1 << 22);
  if (c.dim % c.n_heads != 0) throw_error("{}: dim {} is not a multiple of n_heads {}", path, c.dim, c.n_heads);
  if (c.n_heads % c.n_kv_heads != 0) {
    throw_error("{}: n_heads {} is not a multiple of n_kv_heads {}", path, c.n_heads, c.n_kv_heads);
  }
  if ((c.dim / c.n_heads) % 2 != 0) throw_error("{}: head size {} is odd", path, c.dim / c.n_heads);
  return c;
}

// Element counts of the checkpoint's tensors, in file order.
struct Layout {
  uint64_t dim, hidden, layers, kv_dim, vocab, head_size, seq_len;
  uint64_t total_floats(bool shared) const {
    uint64_t n = vocab * dim                          // token_embedding_table
                 + layers * dim                       // rms_att_weight
                 + layers * dim * dim                 // wq
                 + 2 * layers * dim * kv_dim          // wk, wv
                 + layers * dim * dim                 // wo
                 + layers * dim                       // rms_ffn_weight
                 + 3 * layers * dim * hidden          // w1, w2, w3
                 + dim                                // rms_final_weight
                 + seq_len * head_size;               // freq_cis_real + freq_cis_imag (head_size/2 each)
    return shared ? n : n + vocab * dim;
  }
};

Layout layout_of(const Llama2cConfig& c) {
  const uint64_t head_size = static_cast<uint64_t>(c.dim / c.n_heads);
  return {static_cast<uint64_t>(c.dim), static_cast<uint64_t>(c.hidden_dim), static_cast<uint64_t>(c.n_layers),
          head_size * static_cast<uint64_t>(c.n_kv_heads), static_cast<uint64_t>(c.vocab_size), head_size,
          static_cast<uint64_t>(c.seq_len)};
}

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
};

bool is_byte_piece(const std::string& s) {
  if (s.size() != 6 || s.compare(0, 3, "<0x") != 0 || s[5] != '>') return false;
  return std::isxdigit(static_cast<unsigned char>(s[3])) && std::isxdigit(static_cast<unsigned char>(s[4]));
}

Vocab read_tokenizer(const std::string& path, int32_t vocab_size) {
  MappedFile file(path);
  const auto bytes = file.bytes();
  size_t pos = 0;
  auto need = [&](size_t n, const char* what, int32_t id) {
    if (n > bytes.size() - pos) {
      throw_error("{}: truncated at byte {} reading {} of token {} (vocab size {})", path, pos, what, id, vocab_size);
    }
  };
  need(4, "max_token_length", -1);
  pos += 4;
  Vocab v;
  for (int32_t id = 0; id < vocab_size; ++id) {
    float score;
    int32_t len;
    need(4, "score", id);
    std::memcpy(&score, bytes.data() + pos, 4);
    pos += 4;
    need(4, "length", id);
    std::memcpy(&len, bytes.data() + pos, 4);
    if (len < 0) throw_error("{}: token {} has negative length {} at byte {}", path, id, len, pos);
    pos += 4;
    need(static_cast<size_t>(len), "text", id);
    std::string text(reinterpret_cast<const char*>(bytes.data() + pos), static_cast<size_t>(len));
    pos += static_cast<size_t>(len);

    int32_t type = kTypeNormal;
    if (id == kUnk) {
      text = "<unk>";
      type = kTypeUnknown;
    } else if (id == kBos) {
      text = "<s>";
      type = kTypeControl;
    } else if (id == kEos) {
      text = "</s>";
      type = kTypeControl;
    } else if (text.empty()) {
      type = kTypeControl;
    } else if (is_byte_piece(text)) {
      type = kTypeByte;
    }
    std::string escaped;  // SentencePiece writes spaces as U+2581 LOWER ONE EIGHTH BLOCK
    for (char ch : text) {
      if (ch == ' ') escaped += "\xe2\x96\x81";
      else escaped += ch;
    }
    v.tokens.push_back(std::move(escaped));
    v.scores.push_back(score);
    v.types.push_back(type);
  }
  if (pos != bytes.size()) {
    throw_error("{}: {} bytes left after {} tokens: the tokenizer does not match the model's vocab size", path,
                bytes.size() - pos, vocab_size);
  }
  return v;
}

}  // namespace

Llama2cConfig read_llama2c_config(const std::string& model_path) {
  MappedFile file(model_path);
  const Llama2cConfig c = parse_header(file.bytes(), model_path);
  const uint64_t expected = 28 + layout_of(c).total_floats(c.shared_classifier) * 4;
  if (file.bytes().size() != expected) {
    throw_error("{}: {} bytes, but a checkpoint with this header has {} bytes", model_path, file.bytes().size(),
                expected);
  }
  return c;
}

Llama2cConfig convert_llama2c(const Llama2cConvertOptions& options) {
  const Llama2cConfig c = read_llama2c_config(options.model_path);
  const Layout L = layout_of(c);
  const uint32_t block = traits(options.matrix_type).block_elements;
  if (L.dim % block != 0 || L.hidden % block != 0) {
    throw_error("{} needs rows that are multiples of {}; this model has dim {} and hidden_dim {}",
                tensor_type_name(options.matrix_type), block, L.dim, L.hidden);
  }
  if (!quant::can_quantize(options.matrix_type)) {
    throw_error("cannot write {} tensors", tensor_type_name(options.matrix_type));
  }
  Vocab vocab = read_tokenizer(options.tokenizer_path, c.vocab_size);
  auto file = std::make_shared<MappedFile>(options.model_path);
  const float* weights = reinterpret_cast<const float*>(file->bytes().data() + 28);  // 28 keeps 4-byte alignment

  // Offsets (in floats) of each tensor group in the checkpoint.
  uint64_t at = 0;
  auto take = [&](uint64_t n) {
    const uint64_t start = at;
    at += n;
    return start;
  };
  const uint64_t tok_embd = take(L.vocab * L.dim);
  const uint64_t rms_att = take(L.layers * L.dim);
  const uint64_t wq = take(L.layers * L.dim * L.dim);
  const uint64_t wk = take(L.layers * L.dim * L.kv_dim);
  const uint64_t wv = take(L.layers * L.dim * L.kv_dim);
  const uint64_t wo = take(L.layers * L.dim * L.dim);
  const uint64_t rms_ffn = take(L.layers * L.dim);
  const uint64_t w1 = take(L.layers * L.dim * L.hidden);
  const uint64_t w2 = take(L.layers * L.hidden * L.dim);
  const uint64_t w3 = take(L.layers * L.dim * L.hidden);
  const uint64_t rms_final = take(L.dim);
  take(L.seq_len * L.head_size);  // freq_cis: RoPE tables, recomputed by every runtime
  const uint64_t wcls = c.shared_classifier ? tok_embd : take(L.vocab * L.dim);

  GgufWriter w;
  auto& md = w.metadata();
  const std::string name =
      options.name.empty() ? std::filesystem::path(options.model_path).stem().string() : options.name;
  md.set("general.architecture", Value::string("llama"));
  md.set("general.name", Value::string(name));
  md.set("general.file_type", Value::u32(llama_file_type(options.matrix_type)));
  md.set("general.quantization_version", Value::u32(2));
  md.set("llama.vocab_size", Value::u32(static_cast<uint32_t>(c.vocab_size)));
  md.set("llama.context_length", Value::u32(static_cast<uint32_t>(c.seq_len)));
  md.set("llama.embedding_length", Value::u32(static_cast<uint32_t>(c.dim)));
  md.set("llama.feed_forward_length", Value::u32(static_cast<uint32_t>(c.hidden_dim)));
  md.set("llama.block_count", Value::u32(static_cast<uint32_t>(c.n_layers)));
  md.set("llama.attention.head_count", Value::u32(static_cast<uint32_t>(c.n_heads)));
  md.set("llama.attention.head_count_kv", Value::u32(static_cast<uint32_t>(c.n_kv_heads)));
  md.set("llama.rope.dimension_count", Value::u32(static_cast<uint32_t>(L.head_size)));
  md.set("llama.rope.freq_base", Value::f32(10000.0f));
  md.set("llama.attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
  md.set("tokenizer.ggml.model", Value::string("llama"));
  md.set("tokenizer.ggml.tokens", Value::string_array(vocab.tokens));
  md.set("tokenizer.ggml.scores", Value::f32_array(vocab.scores));
  md.set("tokenizer.ggml.token_type", Value::i32_array(vocab.types));
  md.set("tokenizer.ggml.unknown_token_id", Value::u32(kUnk));
  md.set("tokenizer.ggml.bos_token_id", Value::u32(kBos));
  md.set("tokenizer.ggml.eos_token_id", Value::u32(kEos));
  md.set("tokenizer.ggml.add_bos_token", Value::boolean(true));
  md.set("tokenizer.ggml.add_eos_token", Value::boolean(false));

  // A tensor from `count` floats at `offset`; 1-D tensors stay F32 as llama.cpp keeps norms.
  auto add = [&](const std::string& tname, uint64_t offset, std::vector<uint64_t> shape) {
    const TensorType type = shape.size() == 1 ? TensorType::F32 : options.matrix_type;
    const uint64_t row = shape[0];
    uint64_t count = 1;
    for (uint64_t d : shape) count *= d;
    w.add_tensor(tname, type, shape, [file, weights, offset, count, row, type](std::span<uint8_t> out) {
      const uint64_t rows = count / row;
      const uint64_t row_bytes_out = out.size() / rows;
      for (uint64_t r = 0; r < rows; ++r) {
        quant::quantize_row(type, weights + offset + r * row, out.data() + r * row_bytes_out,
                            static_cast<int64_t>(row));
      }
    });
  };
  // ggml shapes are innermost first: a [out][in] row-major matrix is {in, out}.
  add("token_embd.weight", tok_embd, {L.dim, L.vocab});
  add("output_norm.weight", rms_final, {L.dim});
  if (!c.shared_classifier) add("output.weight", wcls, {L.dim, L.vocab});
  for (uint64_t l = 0; l < L.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", rms_att + l * L.dim, {L.dim});
    add(p + "attn_q.weight", wq + l * L.dim * L.dim, {L.dim, L.dim});
    add(p + "attn_k.weight", wk + l * L.dim * L.kv_dim, {L.dim, L.kv_dim});
    add(p + "attn_v.weight", wv + l * L.dim * L.kv_dim, {L.dim, L.kv_dim});
    add(p + "attn_output.weight", wo + l * L.dim * L.dim, {L.dim, L.dim});
    add(p + "ffn_norm.weight", rms_ffn + l * L.dim, {L.dim});
    add(p + "ffn_gate.weight", w1 + l * L.dim * L.hidden, {L.dim, L.hidden});
    add(p + "ffn_down.weight", w2 + l * L.hidden * L.dim, {L.hidden, L.dim});
    add(p + "ffn_up.weight", w3 + l * L.dim * L.hidden, {L.dim, L.hidden});
  }
  w.write(options.output_path);
  return c;
}

}  // namespace vellum::gguf
