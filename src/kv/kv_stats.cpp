#include "kv/kv_stats.h"

#include <fmt/format.h>

namespace vellum::kv {

std::string format_stats(const KvStats& s) {
  return fmt::format(
      "kv: blocks {} used {} free {} (cached {}) cached-total {} | seqs {} | prefix {} lookups, {}/{} tokens hit "
      "({:.1f}%), {} pending | evictions {} | cow copies {} | hash collisions {}",
      s.blocks_total, s.blocks_used, s.blocks_free, s.blocks_cached_free, s.blocks_cached, s.num_sequences,
      s.prefix_lookups, s.prefix_hit_tokens, s.prefix_query_tokens, 100.0 * s.hit_rate(), s.prefix_pending_hit_tokens,
      s.evictions, s.cow_copies, s.hash_collisions);
}

}  // namespace vellum::kv
