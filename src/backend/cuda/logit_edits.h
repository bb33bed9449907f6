#pragma once
// The step's logit edits (backend/logit_edits.h) applied on the device, so that a row with a bias,
// suppressed tokens or penalties can still be reduced there (argmax, top-k, draws). The edits are
// uploaded with the step's inputs: `rows` (at a place that depends on the step's row count only)
// holds the edits' byte offset from `base`, then the row offsets; the kernel reads both at run
// time, so a captured step replays with any edits. Plain C++17, shared with nvcc.

#include <cstdint>

#include <cuda_runtime.h>

namespace vellum::cuda {

// One edit, laid out as backend::LogitEdit (the backend copies the step's edits as they are).
struct EditArg {
  enum : uint32_t { kBias = 1, kSuppress = 2, kRepetition = 4, kSubtract = 8 };
  int32_t token;
  uint32_t ops;
  float bias, repetition, subtract;
};

// x: `logit_rows` rows of `cols` floats; rows[0] = the edits' byte offset from base, rows[1 + r] =
// row r's first edit (rows[1 + logit_rows] the end).
cudaError_t launch_edit_logits(float* x, int64_t logit_rows, int64_t cols, const uint8_t* base, const uint32_t* rows,
                               cudaStream_t stream);

}  // namespace vellum::cuda
