#pragma once
// One forward pass over a ragged set of sequences (DESIGN.md, "Batch"). Prefill, chunked prefill,
// decode and speculative verification all have this shape: a sequence contributes a slice of new
// tokens at its own positions, attends to everything already in its KV blocks plus its new tokens
// (causally), and asks for logits on some of its rows.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vellum::engine {

struct BatchSequence {
  uint32_t token_begin = 0;   // first of its new tokens in Batch::tokens
  uint32_t token_count = 0;   // number of new tokens
  uint32_t n_past = 0;        // tokens of this sequence already in the KV cache
  std::vector<int32_t> block_table;  // physical KV block of each logical block, covering n_past + token_count
};

struct Batch {
  std::vector<int32_t> tokens;        // all new tokens, sequence after sequence
  std::vector<int32_t> positions;     // absolute position of each new token
  std::vector<int64_t> slot_mapping;  // physical KV slot (block * block_size + offset) of each new token
  std::vector<BatchSequence> sequences;
  std::vector<int32_t> logit_rows;    // rows of `tokens` whose logits are wanted, in output order
  uint32_t block_size = 16;

  size_t size() const { return tokens.size(); }

  // Appends a sequence's slice; positions and slots are derived from n_past and the block table.
  // `want_logits`: none, the last row, or every row of the slice (speculative verification).
  enum class Logits { None, Last, All };
  void add_sequence(const std::vector<int32_t>& new_tokens, uint32_t n_past, std::vector<int32_t> block_table,
                    Logits want_logits);

  // Throws vellum::Error when the batch is inconsistent (a block table too short, a slot out of range
  // of `num_blocks`, rows out of range). Called by the model before a forward pass.
  void validate(uint32_t num_blocks) const;
};

}  // namespace vellum::engine
