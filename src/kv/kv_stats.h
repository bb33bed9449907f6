#pragma once
// KvManager counters: a snapshot of the pool plus running totals since construction. The server
// exports them as Prometheus metrics later; format_stats() is the --log-kv-stats line.

#include <cstdint>
#include <string>

namespace vellum::kv {

struct KvStats {
  // Pool snapshot. blocks_free includes blocks_cached_free (free, but still holding a cached prefix).
  uint32_t blocks_total = 0;
  uint32_t blocks_used = 0;
  uint32_t blocks_free = 0;
  uint32_t blocks_cached_free = 0;
  uint32_t blocks_cached = 0;  // in the prefix cache, used or free
  uint32_t num_sequences = 0;

  // Totals.
  uint64_t prefix_lookups = 0;       // allocate() calls that consulted the prefix cache
  uint64_t prefix_query_tokens = 0;  // prompt tokens those calls asked about
  uint64_t prefix_hit_tokens = 0;    // of which reused from cached blocks (computed or pending)
  uint64_t prefix_pending_hit_tokens = 0;  // of those, still being computed by another sequence
  uint64_t evictions = 0;            // cached free blocks reused for other content
  uint64_t cow_copies = 0;           // block copies handed to the backend
  uint64_t hash_collisions = 0;      // lookups whose hash matched a block with other content

  double hit_rate() const {
    return prefix_query_tokens == 0 ? 0.0 : static_cast<double>(prefix_hit_tokens) / static_cast<double>(prefix_query_tokens);
  }
};

// One line: "kv: blocks 64 used 12 free 52 (cached 30) | seqs 3 | prefix 10 lookups, 900/1200 tokens hit (75.0%) ..."
std::string format_stats(const KvStats& s);

}  // namespace vellum::kv
