#include "kv/kv_layout.h"

#include "core/error.h"

namespace vellum::kv {
namespace {

uint64_t row_bytes_checked(TensorType type, uint64_t elements, uint32_t layer, char which) {
  const auto& t = traits(type);
  if (elements % t.block_elements != 0) {
    throw_error("KV layout: layer {} {} row of {} elements is not a whole number of {} blocks ({} elements)",
                layer, which, elements, t.name, t.block_elements);
  }
  return row_bytes(type, elements);
}

}  // namespace

uint64_t KvLayerShape::k_bytes_per_token() const {
  return row_bytes(type, static_cast<uint64_t>(n_kv_heads) * head_dim_k);
}
uint64_t KvLayerShape::v_bytes_per_token() const {
  return row_bytes(type, static_cast<uint64_t>(n_kv_heads) * head_dim_v);
}

KvLayout KvLayout::uniform(uint32_t n_layers, uint32_t n_kv_heads, uint32_t head_dim, TensorType type,
                           uint32_t block_size) {
  KvLayout layout;
  layout.block_size = block_size;
  layout.layers.assign(n_layers, KvLayerShape{n_kv_heads, head_dim, head_dim, type});
  return layout;
}

uint64_t KvLayout::bytes_per_token() const {
  uint64_t total = 0;
  for (const auto& l : layers) total += l.k_bytes_per_token() + l.v_bytes_per_token();
  return total;
}

uint64_t KvLayout::k_offset(uint32_t layer) const {
  uint64_t off = 0;
  for (uint32_t i = 0; i < layer; ++i) off += (layers[i].k_bytes_per_token() + layers[i].v_bytes_per_token()) * block_size;
  return off;
}

uint64_t KvLayout::v_offset(uint32_t layer) const {
  return k_offset(layer) + layers[layer].k_bytes_per_token() * block_size;
}

void KvLayout::validate() const {
  if (block_size == 0) throw_error("KV layout: block size must be at least 1 token");
  if (layers.empty()) throw_error("KV layout: no layers");
  for (uint32_t i = 0; i < layers.size(); ++i) {
    const auto& l = layers[i];
    if (l.n_kv_heads == 0 || l.head_dim_k == 0 || l.head_dim_v == 0) {
      throw_error("KV layout: layer {} has an empty shape ({} KV heads, head dims {}/{})", i, l.n_kv_heads,
                  l.head_dim_k, l.head_dim_v);
    }
    row_bytes_checked(l.type, static_cast<uint64_t>(l.n_kv_heads) * l.head_dim_k, i, 'K');
    row_bytes_checked(l.type, static_cast<uint64_t>(l.n_kv_heads) * l.head_dim_v, i, 'V');
  }
}

uint64_t blocks_for_tokens(uint64_t tokens, uint32_t block_size) {
  if (block_size == 0) throw_error("KV block size must be at least 1 token");
  return (tokens + block_size - 1) / block_size;
}

uint64_t blocks_for_budget(uint64_t bytes, const KvLayout& layout) {
  layout.validate();
  return bytes / layout.bytes_per_block();
}

}  // namespace vellum::kv
