#include "engine/batch.h"

#include "core/error.h"

namespace vellum::engine {

void Batch::add_sequence(const std::vector<int32_t>& new_tokens, uint32_t n_past, std::vector<int32_t> block_table,
                         Logits want_logits) {
  BatchSequence s;
  s.token_begin = static_cast<uint32_t>(tokens.size());
  s.token_count = static_cast<uint32_t>(new_tokens.size());
  s.n_past = n_past;
  s.block_table = std::move(block_table);
  for (size_t i = 0; i < new_tokens.size(); ++i) {
    const uint32_t pos = n_past + static_cast<uint32_t>(i);
    tokens.push_back(new_tokens[i]);
    positions.push_back(static_cast<int32_t>(pos));
    const size_t logical = pos / block_size;
    const int64_t block = logical < s.block_table.size() ? s.block_table[logical] : -1;
    slot_mapping.push_back(block < 0 ? -1 : block * block_size + pos % block_size);
  }
  if (want_logits == Logits::Last && s.token_count > 0) logit_rows.push_back(static_cast<int32_t>(tokens.size() - 1));
  if (want_logits == Logits::All) {
    for (uint32_t i = 0; i < s.token_count; ++i) logit_rows.push_back(static_cast<int32_t>(s.token_begin + i));
  }
  sequences.push_back(std::move(s));
}

void Batch::validate(uint32_t num_blocks) const {
  if (block_size == 0) throw_error("batch: block size 0");
  if (positions.size() != tokens.size() || slot_mapping.size() != tokens.size()) {
    throw_error("batch: {} tokens but {} positions and {} slots", tokens.size(), positions.size(), slot_mapping.size());
  }
  uint32_t expected_begin = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const auto& s = sequences[i];
    if (s.token_begin != expected_begin) throw_error("batch: sequence {} does not follow the previous one", i);
    expected_begin += s.token_count;
    const uint64_t total = uint64_t(s.n_past) + s.token_count;
    const uint64_t blocks_needed = (total + block_size - 1) / block_size;
    if (s.block_table.size() < blocks_needed) {
      throw_error("batch: sequence {} covers {} tokens but its block table has {} blocks of {}", i, total,
                  s.block_table.size(), block_size);
    }
    for (uint64_t b = 0; b < blocks_needed; ++b) {
      if (s.block_table[b] < 0 || static_cast<uint32_t>(s.block_table[b]) >= num_blocks) {
        throw_error("batch: sequence {} block {} is {} (pool has {} blocks)", i, b, s.block_table[b], num_blocks);
      }
    }
    for (uint32_t t = 0; t < s.token_count; ++t) {
      const uint32_t row = s.token_begin + t;
      if (positions[row] != static_cast<int32_t>(s.n_past + t)) throw_error("batch: row {} has position {}", row, positions[row]);
      const int64_t pos = positions[row];
      const int64_t slot = int64_t(s.block_table[static_cast<size_t>(pos / block_size)]) * block_size + pos % block_size;
      if (slot_mapping[row] != slot) throw_error("batch: row {} slot {} disagrees with its block table ({})", row, slot_mapping[row], slot);
    }
  }
  if (expected_begin != tokens.size()) throw_error("batch: sequences cover {} of {} tokens", expected_begin, tokens.size());
  for (int32_t r : logit_rows) {
    if (r < 0 || static_cast<size_t>(r) >= tokens.size()) throw_error("batch: logit row {} out of range", r);
  }
}

}  // namespace vellum::engine
