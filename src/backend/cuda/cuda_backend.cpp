#include "backend/cuda/cuda_backend.h"

#include "backend/logit_rows.h"
#include "backend/rope_angles.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "backend/cuda/argmax.h"
#include "backend/cuda/attention.h"
#include "backend/cuda/attn_rope_row.h"
#include "backend/cuda/attn_wgmma.h"
#include "backend/cuda/cuda_graphs.h"
#include "backend/cuda/dequant_ahead.h"
#include "backend/cuda/det_mma16.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/fused_kernels.h"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/gemv_mma.h"
#include "backend/cuda/layer_kernel.h"
#include "backend/cuda/cuda_util.h"
#include "backend/cuda/dq_mma.h"
#include "backend/cuda/dq_tma.h"
#include "backend/cuda/mmq.h"
#include "backend/cuda/log_normalizer.h"
#include "backend/cuda/logit_edits.h"
#include "backend/cuda/row_draw.h"
#include "backend/cuda/topk.h"
#include "core/error.h"

namespace vellum::backend {

using cuda::check;

namespace {

constexpr size_t kAlign = 256;
constexpr size_t kScratchChunk = size_t(64) << 20;
constexpr size_t kUploadChunk = size_t(32) << 20;
constexpr int64_t kMaxGridY = 65535;
// Elements of a dequantized BF16 weight tile for the GEMM path (128 MiB) and f32 floats of attention
// partials per launch (256 MiB): bounded workspaces whatever the matrix or batch. 128 MiB holds a
// whole 14 336 x 4 096 matrix, so an 8B-class layer is one dequantization and one GEMM a weight:
// on an H200 (round 8) 64 MiB tiles gave prefill 512 20.0k tok/s (Q4_K_M), 128 MiB 27.3k, 256 MiB
// the same; 16 MiB tiles 10.5k (eager steps became host-bound on cuBLAS calls).
// VELLUM_CUDA_WEIGHT_TILE_MIB overrides it (experiments).
constexpr int64_t kWeightTileElems = int64_t(64) << 20;
constexpr int64_t kAttnWorkspaceFloats = int64_t(64) << 20;
// Decode steps with more rows than this run eagerly (set_graph_max_rows / VELLUM_CUDA_GRAPH_ROWS).
// Round 3 measured graphs 35-60% slower at 128-256 rows; on round 10's code they gain 1-7% at
// every size from 1 to 256 rows (docs/cuda.md, round 11).
constexpr size_t kMaxGraphRows = 256;
// A decode step's attention grid covers a power of two of kAttnSplit-position spans, at least this
// many (1 024 positions), so that a graph serves every context up to it (blocks past a row's
// context return at once).
constexpr int32_t kMinGraphSplits = 1024 / cuda::kAttnSplit;
// The same for a step of one row (round 29): 256 positions, so that a short row's one-row attention
// launch (attn_rope_row.h: a block per 128 positions and query head) is 2 slices, not 8, of blocks
// that hold their registers until the step's previous kernel ends. A row that grows to 1 024
// positions captures two more classes.
constexpr int32_t kMinGraphSplitsOneRow = 256 / cuda::kAttnSplit;
// Default of set_attention_tc_rows: sequences adding at least this many rows in a step take the
// tensor-core attention (measured crossover, docs/cuda.md round 5).
constexpr int kAttnTcRows = 8;
// AttnParams::small_rows: decode launches of up to this many rows keep round 5's kernel (8 until
// round 53, which measured round 7's faster from 4 rows: attention.h, kAttnRound7Rows).
constexpr int64_t kAttnSmallRows = 3;

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// The step's attention plan for the device: [tiles, split rows, tiles × {row0, rows, ctx0, table},
// split rows...]: sequences adding at least `tc_rows` rows go to the tensor-core kernel in tiles of
// kAttnTileRows rows, every other row to the split path. Empty when no sequence qualifies.
std::vector<int32_t> attention_plan(const StepInfo& step, TensorType kv_type, int tc_rows, size_t n) {
  std::vector<int32_t> plan;
  if (tc_rows <= 0 || (kv_type != TensorType::F16 && kv_type != TensorType::BF16)) return plan;
  std::vector<uint8_t> tc(n, 0);
  plan = {0, 0};
  for (const StepSequence& s : step.sequences) {
    if (s.q_count < uint32_t(tc_rows)) continue;
    for (uint32_t t0 = 0; t0 < s.q_count; t0 += cuda::kAttnTileRows) {
      const uint32_t rows = std::min<uint32_t>(cuda::kAttnTileRows, s.q_count - t0);
      plan.insert(plan.end(), {int32_t(s.q_begin + t0), int32_t(rows), int32_t(s.n_past + t0 + 1), int32_t(s.table_begin)});
      ++plan[0];
    }
    std::fill(tc.begin() + s.q_begin, tc.begin() + s.q_begin + s.q_count, uint8_t(1));
  }
  if (plan[0] == 0) return {};
  for (size_t r = 0; r < n; ++r) {
    if (tc[r] == 0) plan.push_back(int32_t(r)), ++plan[1];
  }
  return plan;
}

// Per-pair frequencies and cos/sin magnitude from backend/rope_angles, as the CPU backend rotates.
cuda::RopeParams rope_params(const RopeConfig& rope) {
  cuda::RopeParams p{};
  const uint32_t half = rope.dims / 2;
  if (half > uint32_t(cuda::kMaxRopePairs)) throw_error("CUDA backend: RoPE over {} dims (at most {})", rope.dims, 2 * cuda::kMaxRopePairs);
  const RopeAngles angles = rope_angles(rope);
  p.half = static_cast<int>(half);
  p.interleaved = rope.order == RopeOrder::Interleaved ? 1 : 0;
  p.magnitude = angles.magnitude;
  for (uint32_t i = 0; i < half; ++i) p.inv_freq[i] = angles.inv_freq[i];
  return p;
}

}  // namespace

struct CudaBackend::Impl {
  int device = 0;
  std::string device_name;
  cudaStream_t stream = nullptr;
  // device_wait_seconds: from the launch of a step's last work to its results on the host (a copy
  // into pageable memory blocks until the kernels before it have run, so the copies count too).
  double wait_seconds = 0;
  int64_t steps = 0;  // begin_step calls (activity_report)
  // StepGraphs::launch_early at every recorded step (VELLUM_CUDA_EARLY_LAUNCH=0 / set_early_launch).
  bool early_launch = [] {
    const char* e = std::getenv("VELLUM_CUDA_EARLY_LAUNCH");
    return e == nullptr || std::string(e) != "0";
  }();
  // The step's draws (StepInfo::draws) on the device and as given, for draw_rows.
  const cuda::DrawArg* d_draws = nullptr;
  std::vector<RowDraw> step_draws;
  // The step's logit edits: on the device (d_step + the offset in d_edit_rows[0]) and kept here for
  // edit_logits' checks.
  const uint8_t* d_step = nullptr;
  const uint32_t* d_edit_rows = nullptr;
  std::vector<LogitEdit> step_edits;
  std::vector<uint32_t> step_edit_rows;
  std::vector<int32_t> last_gather;  // gather_rows' last indices (an early graph read those)
  std::chrono::steady_clock::time_point launched_at;
  // The host side of steps (activity_report): begin_step, recording the ops up to the step's end,
  // and the launch there (graph replay, or the eager kernels left).
  double begin_seconds = 0, record_seconds = 0, launch_seconds = 0;
  std::chrono::steady_clock::time_point step_at, record_at;
  static double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  // Ends the step's recording: launches what is recorded and starts the device-wait clock.
  void launch_step() {
    record_seconds += since(record_at);
    const auto t = std::chrono::steady_clock::now();
    graphs.finish(stream);
    launched_at = record_at = std::chrono::steady_clock::now();
    launch_seconds += std::chrono::duration<double>(launched_at - t).count();
  }
  // Blocks until the stream's work is done and counts the time since launch_step() as device wait.
  void wait_for_stream(const char* what) {
    check(cudaStreamSynchronize(stream), what);
    wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - launched_at).count();
  }
  cublasHandle_t blas = nullptr;
  // cuBLAS's workspace at a fixed address: under stream capture cuBLAS uses only a workspace set by
  // the user.
  static constexpr size_t kBlasWorkspace = size_t(32) << 20;
  void* blas_ws = nullptr;
  size_t graph_max_rows = kMaxGraphRows;  // decode steps of more rows run eagerly
  // Token rows up to which matmul uses the GEMV kernels. Plain types go to cuBLAS from 2 rows on
  // (it streams BF16 weights as fast as the GEMV, with no per-row x traffic). Quantized types go to
  // dequantize + cuBLAS from 3 rows: on llama3-8b Q8_0 the 8-row GEMV step took 66 ms, the
  // dequantizing path 29 ms at 32 rows (docs/cuda.md); 2 rows is a guess between the two.
  int gemv_max_rows_plain = 1;
  int gemv_max_rows_quant = 2;
  bool int8_gemv = true;       // batch-1 Q8_0/Q4_K/Q6_K on dp4a (set_int8_gemv)
  bool mmq = true;             // 2+ rows of Q8_0/Q4_0/Q5_0/Q4_K/Q5_K/Q6_K on int8 tensor cores (set_mmq)
  int64_t mmq_max_rows = cuda::kMmqMaxRows;  // more rows: dequantize + cuBLAS (set_mmq_max_rows)
  bool deterministic = false;  // every row through the same GEMV kernel (set_deterministic)
  bool det16 = true;  // the deterministic mode's F16/BF16 matmuls on tensor cores (det_mma16.h; VELLUM_CUDA_DET16=0: round 9's f32 GEMV)
  bool det16_for(TensorType type, int64_t K) const { return deterministic && det16 && cuda::det16_supports(type, K); }
  bool layer_kernel = [] {     // set_layer_kernel (off until it beats the ops: docs/cuda.md round 19)
    const char* e = std::getenv("VELLUM_CUDA_LAYER_KERNEL");
    return e != nullptr && std::atoi(e) != 0;
  }();
  cuda::DeviceBuffer layer_sync;  // the layer kernel's barrier words (zeroed once; launches leave them zero)
  cuda::DeviceBuffer layer_gq8;   // its int8 copy of g
  int64_t layer_kernel_calls = 0;  // layer_tail calls that took the kernel (layer_kernel_calls())
  // Round 43 (default on; VELLUM_CUDA_ROW_NORM=0, set_row_norm): a one-row layer tail's norms carried
  // by the GEMVs around them (layer_tail_row). row_norm_q8 holds z's int8 copy, row_norm_sums its
  // partial sums of squares (gemv_kernels.h, RowNormOut / RowNormIn).
  bool row_norm = [] {
    const char* e = std::getenv("VELLUM_CUDA_ROW_NORM");
    return e == nullptr || std::string(e) != "0";
  }();
  cuda::DeviceBuffer row_norm_q8, row_norm_sums;
  int64_t row_norm_calls = 0;  // layer_tail calls that took it (row_norm_calls())
  // The int8 x and scale of a batch-1 matmul whose x is such a norm's h (gemv_batch1's rn).
  struct RowNormX {
    void* q8 = nullptr;
    cuda::RowNormIn in;
  };
  int64_t rope_row_calls = 0;      // rope_attention calls that took the one-row kernel (rope_row_calls())
  bool rope_rows = true;           // set_rope_rows; VELLUM_CUDA_ROPE_ROWS=0
  bool residual_rows = true;       // set_residual_rows; VELLUM_CUDA_RESIDUAL_ROWS=0
  int64_t residual_rows_calls = 0;  // matmuls that added into x (residual_rows_calls())
  int64_t rope_rows_calls = 0;     // rope_attention calls that took launch_rope_kv_rows (rope_rows_calls())
  // Round 37 (opt-in: VELLUM_CUDA_QKV_ROPE=1 / set_qkv_rope): expect_rope's hint, taken by the next
  // grouped Q/K/V launch (RoPE and the K/V store in its end: launch_dq_tma_group_rope), and what that
  // launch did, which rope_attention_rows then leaves out (its rope_kv_rows launch). Off by default:
  // on an H200 (round 38, llama3-8b Q8_0 at 512 rows) the fused launch takes 62.6 µs against
  // 51.7 + 8.3 for the plain launch and rope_kv_rows: its end sits on one wave's critical path.
  bool qkv_rope = false;
  struct RopeHint {
    bool set = false;
    uint32_t layer = 0, head_dim = 0;
    const float *q = nullptr, *k = nullptr, *v = nullptr;
    RopeConfig rc;
  } rope_hint, qkv_hint;
  struct Roped {  // valid: q16 and the layer's new K/V hold rope_kv_rows' results for these q, k, v
    bool valid = false;
    uint32_t layer = 0;
    const float *q = nullptr, *k = nullptr, *v = nullptr;
    int64_t rows = 0;
    void* q16 = nullptr;
  } roped;
  bool roped_take = false;         // rope_attention found `roped` valid for its q, k, v (rope_attention_rows)
  int64_t qkv_rope_calls = 0;      // rope_attention calls whose RoPE the Q/K/V launch had done (qkv_rope_calls())
  cuda::DeviceBuffer rope_cs;      // the step's cos/sin table (launch_rope_table)
  int64_t rope_cs_step = -1, rope_cs_rows = 0;
  const void* rope_cs_at = nullptr;
  cuda::RopeParams rope_cs_params{};
  cuda::DeviceBuffer q16_buf;      // q rotated and rounded to the pool's type (launch_rope_kv_rows)
  int64_t gemv_pair_calls = 0;     // batch-1 matmul_multi calls that took one pair launch (gemv_pair_calls())
  CudaBackend::RowsFusedStats rows_fused_stats;  // round 52's fused 2-16-row launches (rows_fused_stats())
  bool gemv_pair = [] {            // VELLUM_CUDA_GEMV_PAIR=0: two launches (measurement)
    const char* e = std::getenv("VELLUM_CUDA_GEMV_PAIR");
    return e == nullptr || std::string(e) != "0";
  }();
  // Q8_0/Q4_K/Q6_K at dq_min_rows..dq_max_rows token rows: wgmma on the weights dequantized once a
  // block (dq_mma.h), ahead of mmq and dequantize + cuBLAS, when forced (set_dq_mma(true),
  // VELLUM_CUDA_DQ_MMA=1; VELLUM_CUDA_DQ_MMA_ROWS=MIN,MAX sets the range). By default (dq_auto) where
  // it measured faster end to end (H200, docs/cuda.md round 15, after its K-split reduction stopped
  // taking 10-100 us a tile): Q4_K / Q6_K at dq_auto_min_rows..dq_auto_max_rows token rows (17..128),
  // Q8_0 at 17..64, every weight height (mmq below). set_dq_mma(false) and VELLUM_CUDA_DQ_MMA=0 turn both off.
  bool dq_mma = false, dq_auto = true;
  int64_t dq_min_rows = 9, dq_max_rows = 256;
  // VELLUM_CUDA_DQ_AUTO_MIN / _MAX / _MIN_N / _Q8_MAX (measurements).
  int64_t dq_auto_min_rows = 17, dq_auto_max_rows = 128, dq_auto_min_n = 0, dq_auto_q8_max_rows = 64;
  int dq_splits = 0;  // 0: the plan's own K split (VELLUM_CUDA_DQ_MMA_SPLITS, for measurements)
  // Which dq_mma kernel Q4_K / Q6_K take (DqMmaPlan::rs; VELLUM_CUDA_DQ_RS, set_dq_rs): 0 round 11's
  // (A dequantized into shared memory), 1 round 15's (A dequantized into registers, each stage's
  // wgmma waited for), 2 (default) the same with one stage of wgmma in flight: 0-18% faster than 0
  // (round 15, call 4).
  int dq_rs = 2;
  // Rounds 26 and 28: the kernels fed by the bulk tensor copy engine (dq_tma.h) for Q8_0 / Q4_K /
  // Q6_K. dq_tma 1 (the default; VELLUM_CUDA_DQ_TMA, set_dq_tma): matmuls of dq_tma_min_rows..
  // dq_tma_max_rows token rows; 2: of dq_tma_min_rows rows and more; 0 off. dq_tma_kind 4 (the
  // default): round 28's kernel (A fragments dequantized by the multiplying warpgroups); 3: round
  // 26's (A tiles dequantized by warps of their own; VELLUM_CUDA_DQ_TMA_KIND). Round 28 measured
  // the default range on llama3-8b (H100, calls 5-6, against VELLUM_CUDA_DQ_TMA=0 and dq_mma below
  // it): Q4_K_M decode of 64 / 128 / 256 sequences 5 456 -> 5 969, 7 087 -> 8 105, 8 486 -> 10 158
  // tok/s, Q8_0 128 / 256 5 615 -> 7 628, 8 265 -> 9 866; prefill of 512 tokens 42% -> 48% of the
  // GEMM peak (Q8_0 41% -> 45%), 1 024 the same (~53%); at 2 048 rows dequantize + cuBLAS wins (61%
  // vs 52%, call 2); from 17 rows 32 sequences were no faster. Its token tile dq_tma_bt (0 the
  // plan's choice; VELLUM_CUDA_DQ_TMA_BT). dq_rs 3 / 4 forces that kernel wherever dq_mma runs (the
  // checks).
  int dq_tma = 1, dq_tma_kind = 4;
  // Round 51 (H200, llama3-8b at 1k context, greedy, graphs): dq_tma from 17 rows instead of 33,
  // ahead of dq_mma: Q4_K_M 20 / 24 / 32 sequences 7.7 / 7.8 / 8.2 -> 6.8 / 6.7 / 7.2 ms a step,
  // Q8_0 8.7 / 8.8 / 9.3 -> 7.5 / 7.5 / 7.8.
  int64_t dq_tma_min_rows = 17, dq_tma_max_rows = 1024;
  int dq_tma_bt = 0;
  // Round 33 (default on; VELLUM_CUDA_DQ_GROUP=0, set_dq_tma_group): matmul_multi's weights that take
  // the register-A kernel (a layer's Q, K and V) as one launch.
  bool dq_group = true;
  int64_t dq_group_calls = 0;  // matmul_multi calls that took one grouped launch (dq_tma_group_calls())
  int64_t dq_wave_splits = 0;  // many-row SwiGLUs whose gate/up took dq_tma_wave_split's two launches
  // Round 36 (default on; VELLUM_CUDA_DQ_SWIGLU=0, set_dq_tma_swiglu): a many-row quantized SwiGLU
  // as one launch of gate and up tiles side by side whose end writes silu(gate)·up in bf16
  // (launch_dq_tma_swiglu), with on-demand f32 rows only (lazy_swiglu).
  bool dq_swiglu = true;
  int64_t dq_swiglu_calls = 0;  // SwiGLUs that took it (dq_tma_swiglu_calls())
  // Round 37 (default on since round 38; VELLUM_CUDA_DQ_CUT_SPLIT=0, set_dq_swiglu_split_tail): the
  // fused SwiGLU's last wave as 256-token tiles with a two-way K split instead of 128-token tiles,
  // Q8_0 included (H200, llama3-8b Q8_0 prefill 512: 58.9-59.5% -> 59.5-60.5% of the GEMM peak;
  // Q4_K_M even).
  bool dq_cut_split = true;
  int sms = 132;      // multiprocessors of the device (the K split of dq_mma aims at one wave of blocks)
  cuda::DeviceBuffer dq_ws, dq_cnt;
  cuda::DeviceBuffer rows_ws;  // the deterministic rows' partial sums when split (rows_mma.h, det_mma16.h)
  cuda::DeviceBuffer det16_x;  // x rounded into det_mma16's paired layout

  std::vector<void*> weights;
  size_t weight_bytes = 0;
  // Dense copies (set_dense_weight_cache): quantized weight -> its BF16 copy (also in `weights`).
  uint64_t dense_budget = 0, dense_bytes = 0;
  std::unordered_map<const void*, const void*> dense;
  // The weight as the cuBLAS path should read it: its BF16 copy where it has one (then it is a BF16
  // weight like any other: one GEMM, pairs), else itself. Only for matmuls that take the cuBLAS path
  // for the weight's own type (cublas_bf16), so that few-row matmuls still read the quantized bytes.
  Weight dense_view(const Weight& w) const {
    const auto it = dense.find(w.data);
    return it == dense.end() ? w : Weight{w.name, TensorType::BF16, w.cols, w.rows, it->second};
  }
  cuda::PinnedStaging upload_staging[2];

  // Scratch: bump allocation in chunks; release folds them into one chunk of the total size.
  struct Chunk {
    void* ptr;
    size_t size;
  };
  std::vector<Chunk> chunks;
  size_t chunk_used = 0;  // in chunks.back()

  // KV pool (block-major; every layer of one type: F32, F16 or BF16).
  kv::KvLayout layout;
  uint32_t num_blocks = 0;
  uint8_t* pool = nullptr;
  int64_t block_elems = 0;
  size_t kv_elem = sizeof(float);  // bytes per element
  TensorType kv_type = TensorType::F32;
  std::vector<int64_t> k_off, v_off;

  // The current step on the device.
  cuda::PinnedStaging step_staging, gather_staging;
  cuda::DeviceBuffer step_buf, gather_buf, attn_ws, attn_cnt, x_bf16, x_f16, w_bf16, repack_tmp, x_q8, argmax_buf, top_k_buf, draw_buf,
      lognorm_buf, pick_buf;
  // Quantized weights of single-tile GEMMs dequantized ahead on a side stream (dequant_ahead.h);
  // VELLUM_CUDA_DEQUANT_AHEAD=0 turns it off.
  cuda::DequantAhead ahead;
  bool dequant_ahead_on = true;
  int64_t n_tokens = 0;
  int32_t* d_tokens = nullptr;
  int32_t* d_positions = nullptr;
  int64_t* d_slots = nullptr;
  int32_t* d_row_ctx = nullptr;
  int32_t* d_row_table = nullptr;
  int32_t* d_tables = nullptr;
  int64_t n_slots = 0;
  int32_t max_ctx = 0;
  int32_t attn_splits = 0;  // attention spans per row this step (padded on decode steps)
  // Tensor-core attention: tiles of the long chunks and the rows left to the split path (both
  // empty / null when no sequence reaches attn_tc_rows; then every row takes the split path).
  int attn_tc_rows = kAttnTcRows;
  bool det_attn_tc = [] {  // set_det_attention_tc
    const char* e = std::getenv("VELLUM_CUDA_DET_ATTN_TC");
    return e != nullptr && std::string(e) == "1";
  }();
  // Its span, in tiles of 64 positions (VELLUM_CUDA_DET_SPAN_TILES, a measurement knob; a run's
  // bits depend on it, so it is fixed for the process).
  int det_span_tiles = [] {
    const char* e = std::getenv("VELLUM_CUDA_DET_SPAN_TILES");
    return e != nullptr && std::atoi(e) > 0 ? std::atoi(e) : cuda::kDetSpanTiles;
  }();
  int32_t n_attn_tiles = 0, n_split_rows = 0, max_tile_rows = 0;
  const cuda::AttnTile* d_attn_tiles = nullptr;
  const int32_t* d_split_rows = nullptr;
  cuda::StepGraphs graphs;

  // The int8 copy of a batch-1 norm output, written by the norm kernel itself (round 5): valid for
  // the tensor at q8_of until any op other than a matmul reading it runs (every other op calls
  // forget_q8 first; a matmul whose output overlaps it forgets it too). The decision is host state
  // taken while an op is recorded, so a graph replays exactly what was recorded.
  cuda::DeviceBuffer x_q8_norm;
  const float* q8_of = nullptr;
  int64_t q8_cols = 0;
  // 2..kMaxI8Rows token rows quantized for the int8 GEMV (round 8) in x_q8_rows: Q, K and V (gate and
  // up) read the same rows, so they are quantized once; forgotten like q8_of.
  cuda::DeviceBuffer x_q8_rows;
  const float* q8r_of = nullptr;
  int64_t q8r_rows = 0, q8r_cols = 0;
  // Rows up to which it is used (Q8_0: at most i8_rows_q8). On an H200 (round 8, llama3-8b decode,
  // eager, tok/s against mmq): Q4_K_M 2 / 4 / 8 seqs 532 / 775 / 1 162 vs 243 / 524 / 1 086; Q8_0 2 / 4
  // seqs 429 / 699 vs 250 / 547, but 8 seqs 984 vs 1 183. VELLUM_CUDA_I8_ROWS=N sets both (0: off).
  int i8_rows_max = 8, i8_rows_q8 = 4;
  // Outside the deterministic mode, from 3 of those rows on (4 until round 51; Q8_0 too, up to i8_rows_max), int8
  // tensor cores instead (gemv_mma.h, round 41; H200, llama3-8b at 1k context, tok/s with it at every
  // row count against the rows GEMV: Q4_K_M 2 / 4 / 8 seqs 565-568 / 1 068-1 076 / 1 976-1 990 against
  // 649-664 / 969-986 / 1 080-1 089, Q8_0 465-466 / 890 / 1 675-1 676 against 587-595 / 868-873 /
  // 1 352-1 386 with mmq from 5; round 42's launch shapes (calls 3-4): Q4_K_M 4 / 8 seqs 1 136-1 157 / 2 107-2 139,
  // Q8_0 937-988 / 1 763-1 833, and from 2 rows 2 seqs 556 against 672). q8r_mma: the cached rows
  // are in that kernel's fragment order. set_gemv_mma / VELLUM_CUDA_GEMV_MMA=0 turn it off;
  // VELLUM_CUDA_GEMV_MMA_MIN=N takes it from N rows (experiments). Round 51 (H200, the same
  // launch shapes as round 44, greedy, graphs): from 3 rows, 3 sequences Q4_K_M 852 / 860 -> 917
  // tok/s, Q8_0 751 / 756 -> 815; from 2, 2 sequences still lose (659 / 662 -> 625, 598 -> 550).
  bool gemv_mma = true, q8r_mma = false;
  int gemv_mma_min = 0;
  // Round 51: the same kernel up to gemv_mma_max rows (kMmaRowsMax, 16; VELLUM_CUDA_GEMV_MMA_MAX=N,
  // measurements), in tiles of 8 token columns, instead of mmq at 9-16 rows (H200, llama3-8b at 1k
  // context, greedy, graphs: Q4_K_M 12 / 16 sequences 8.1 / 7.3 -> 4.9 / 4.9 ms a step, Q8_0 8.0 /
  // 7.1 -> 5.1 / 5.2; 8 sequences take 3.6 and 4.2 ms).
  int gemv_mma_max = cuda::kMmaRowsMax;
  // Round 52: at 2-16 token rows on the int8 rows kernels (the rows GEMV or gemv_mma), a layer's Q, K
  // and V of one type as one launch and gate/up with silu(gate)·up in the launch's epilogue (before:
  // a launch a weight, then swiglu_kernel). The same bits. set_rows_fused / VELLUM_CUDA_ROWS_FUSED=0
  // turn it off (measurements, checks).
  bool rows_fused = true;
  // The x layout the last fused launch read (its rows, columns and whether gemv_mma's): a norm of
  // that shape writes its output's int8 copy in it (norm_q8_rows), so that the next fused launch
  // (this step's next Q/K/V or gate/up) finds x quantized. A hint only: a consumer of another shape
  // quantizes as before.
  int64_t rows_hint_m = 0, rows_hint_k = 0;
  bool rows_hint_mma = false;
  // Round 53: whether a 2-16-row decode attention writes those int8 rows for the output projection
  // (VELLUM_CUDA_ATTN_Q8_ROWS=0: no, a measurement knob; rows_fused off: no).
  bool attn_q8_rows = [] {
    const char* e = std::getenv("VELLUM_CUDA_ATTN_Q8_ROWS");
    return e == nullptr || std::string(e) != "0";
  }();
  // Likewise the bf16 copy of a matmul input (cuBLAS path) at bf16_at: Q, K and V (and gate and up)
  // read the same normed rows, so they are converted once, not once per weight. Since round 7 the
  // producers write it themselves at 2+ rows: the norms into x_bf16, the many-row SwiGLU into
  // act_bf16 (from gate/up GEMMs that write bf16 into gu_bf16), so the conversion kernels go.
  const float* bf16_of = nullptr;
  int64_t bf16_elems = 0;
  const void* bf16_at = nullptr;
  bool bf16_act = true;  // round 7's bf16 producers and paired GEMMs (set_bf16_activations)
  // F16 weights at 2+ rows (round 14): cuBLAS multiplies them as stored by an f16 copy of x at
  // f16_at (converted from the f32 rows, once for Q, K and V). Until round 13 they were converted
  // to bf16 every step like a quantized type: the weight bytes read three times (llama3-8b F16 on an
  // H200: 155 tok/s at 2 sequences, 601 at 8), and the weights rounded to bf16's 8-bit mantissa.
  const float* f16_of = nullptr;
  int64_t f16_elems = 0;
  const void* f16_at = nullptr;
  cuda::DeviceBuffer act_bf16, gu_bf16, act_f16, gu_f16;
  // The many-row SwiGLU output whose f32 rows are not written yet (round 7): the down projection
  // reads only its bf16 copy. An op that reads it in f32 (or writes part of it) first materializes
  // it from the bf16 gate/up still in gu_bf16 (the same kernel and bits); an op that overwrites it
  // whole, or the end of the step, drops it. Every op declares its tensors through touch().
  bool lazy_swiglu = true;   // set_lazy_swiglu
  // The many-row SwiGLU path (matmul_swiglu_rows), on by default: BF16 prefill 59% -> 63-65% of
  // the GEMM peak (H200, docs/cuda.md round 7). Its check crashed twice on the round's branch (an
  // illegal address never explained) but ran clean on main, under compute-sanitizer and in two full
  // check runs; set_swiglu_rows(false) / VELLUM_CUDA_SWIGLU_ROWS=0 turn it off.
  bool swiglu_rows = true;
  bool gemm_pairs = true;   // set_gemm_pairs; VELLUM_CUDA_GEMM_PAIRS=0
  // Two weights can share a strided-batched call when the second is less than 2 GiB past the first
  // (a model's K/V and gate/up are a few hundred MiB apart; vellum_cuda_check --pair-probe found
  // 5 GiB apart right too, but only these shapes were tried).
  bool pair_ok(const void* lo, const void* hi) const {
    const uintptr_t a = reinterpret_cast<uintptr_t>(lo), b = reinterpret_cast<uintptr_t>(hi);
    return gemm_pairs && b > a && b - a < (uintptr_t(1) << 31);
  }
  struct Lazy {
    float* data = nullptr;
    int64_t elems = 0;
    const void *gate = nullptr, *up = nullptr;
    // Round 36's fused SwiGLU wrote no gate/up: its f32 rows are its bf16 rows (in act_bf16, which
    // only the SwiGLU paths write, each after materialize()) widened.
    const void* h16 = nullptr;
  } lazy;
  static bool overlaps(const Lazy& l, const Tensor& t) {
    return l.data != nullptr && t.data < l.data + l.elems && l.data < t.data + int64_t(t.elements());
  }
  void materialize() {
    if (lazy.data == nullptr) return;
    const Lazy l = lazy;
    lazy = {};
    if (l.h16 != nullptr) {
      graphs.mix(65, l.data, l.elems, l.h16);
      graphs.run([=, this] { launched(cuda::launch_bf16_to_f32(l.h16, l.data, l.elems, stream), "bf16_to_f32 kernel (SwiGLU f32 rows)"); });
      return;
    }
    graphs.mix(44, l.data, l.elems, l.gate, l.up);
    graphs.run([=, this] {
      launched(cuda::launch_swiglu_bf16(l.gate, l.up, l.data, nullptr, l.elems, stream), "swiglu_bf16 kernel (f32 rows)");
    });
  }
  // Round 34: a many-row norm whose f32 rows are not written yet (norm_rows16): the next matmuls
  // read its bf16 copy only. An op that reads them, or writes part of them or the normed x, first
  // materializes them (the same kernel and bits, from x); one that overwrites them whole, or the
  // end of the step, drops them.
  struct LazyNorm {
    float* out = nullptr;
    const float* x = nullptr;
    const float* gain = nullptr;
    int64_t rows = 0, cols = 0;
    float eps = 0.0f;
  } lazy_norm;
  void materialize_norm() {
    if (lazy_norm.out == nullptr) return;
    const LazyNorm l = lazy_norm;
    lazy_norm = {};
    graphs.mix(62, l.out, l.x, l.gain, l.rows, l.cols, l.eps);
    graphs.run([=, this] {
      launched(cuda::launch_add_rms_norm(const_cast<float*>(l.x), nullptr, l.gain, l.rows, l.cols, l.eps, l.out, nullptr, stream),
               "rms_norm kernel (f32 rows)");
    });
  }
  void touch_norm(std::initializer_list<Tensor> in, std::initializer_list<Tensor> out) {
    const LazyNorm& l = lazy_norm;
    const int64_t n = l.rows * l.cols;
    const auto over = [n](const float* a, const Tensor& t) { return t.data < a + n && a < t.data + int64_t(t.elements()); };
    for (const Tensor& t : in) {
      if (over(l.out, t)) return materialize_norm();
    }
    bool whole = false;  // this op overwrites the rows whole: they are never needed
    for (const Tensor& t : out) {
      if (!over(l.out, t)) continue;
      if (t.data != l.out || int64_t(t.elements()) != n) return materialize_norm();
      whole = true;
    }
    for (const Tensor& t : out) {
      if (over(l.x, t) && !whole) return materialize_norm();
    }
    if (whole) lazy_norm = {};
  }
  // An op reads `in` and writes `out` (whole tensors) in f32; a tensor it updates in place is in both.
  void touch(std::initializer_list<Tensor> in, std::initializer_list<Tensor> out = {}) {
    if (roped.valid) {
      for (const Tensor& t : out) {
        if (t.data == roped.q || t.data == roped.k || t.data == roped.v) roped.valid = false;
      }
    }
    if (lazy_norm.out != nullptr) touch_norm(in, out);
    if (lazy.data == nullptr) return;
    for (const Tensor& t : in) {
      if (overlaps(lazy, t)) return materialize();
    }
    for (const Tensor& t : out) {
      if (!overlaps(lazy, t)) continue;
      if (t.data == lazy.data && int64_t(t.elements()) == lazy.elems) {
        lazy = {};  // overwritten whole: never needed
      } else {
        materialize();
      }
      return;
    }
  }
  // Whether x is the one row whose int8 copy a producer (norm, attention) left in x_q8_norm.
  bool has_q8_copy(const Tensor& x) const { return x.rows == 1 && x.data == q8_of && x.cols == q8_cols; }
  // A launch of the split / tensor-core attention paths (attn_launch, defined with attention).
  struct AttnLaunch {
    cuda::AttnParams p;
    const cuda::AttnTile* tiles = nullptr;
    int n_tiles = 0;
    bool det_spans = false, q8_copy = false;
    int64_t rows = 0, launch_rows = 0;
  };
  bool attn_launch(uint32_t layer, const Tensor& q, const AttentionShape& shape, const Tensor& out, AttnLaunch& a);
  // Whether rope_store_kv's kernel takes these shapes (else rope and store_kv check and name them).
  bool rope_store_fits(uint32_t layer, const Tensor& q, const Tensor& k, const Tensor& v, uint32_t head_dim,
                       const RopeConfig& rc) const {
    return layer < layout.layers.size() && head_dim > 0 && head_dim % 2 == 0 && rc.dims <= head_dim && rc.dims % 2 == 0 &&
           q.cols % head_dim == 0 && q.rows == n_tokens && n_slots == n_tokens && layout.layers[layer].head_dim_k == head_dim &&
           k.cols == int64_t(layout.layers[layer].n_kv_heads) * head_dim && k.rows == q.rows && v.cols == k.cols &&
           v.rows == q.rows;
  }
  // The step's RoPE cos/sin table for rp over `rows` positions, launched once a step (the first Q/K/V
  // launch that needs it; a recorded step records it there).
  const float2* rope_table(const cuda::RopeParams& rp, int64_t rows) {
    auto* cs = static_cast<float2*>(grow(rope_cs, size_t(rows) * size_t(rp.half) * sizeof(float2), "RoPE cos/sin table"));
    if (rope_cs_step == steps && rope_cs_rows == rows && rope_cs_at == cs && std::memcmp(&rope_cs_params, &rp, sizeof rp) == 0) return cs;
    rope_cs_step = steps, rope_cs_rows = rows, rope_cs_at = cs, rope_cs_params = rp;
    const int32_t* positions = d_positions;
    graphs.mix(67, cs, rows, positions);
    graphs.mix_bytes(&rp, sizeof rp);
    graphs.run([=, this] { launched(cuda::launch_rope_table(positions, rows, rp, cs, stream), "rope_table kernel"); });
    return cs;
  }
  // Whether the grouped launch of q, k, v (segs) can do the hinted layer's RoPE and K/V store in its
  // end, and its DqRope (q16 and the table made ready) if so.
  bool qkv_rope_for(const RopeHint& h, const Tensor& q, const Tensor& k, const Tensor& v, const cuda::DqSeg* segs, int count,
                    cuda::DqRope& r) {
    // 128-dim heads only: the warpgroup prefill attention's (other heads take rope_store_kv + attention).
    if (!h.set || !qkv_rope || !rope_rows || deterministic || ablate != 0 || count != 3 || q.rows < 2 || h.head_dim != 128) return false;
    if (q.data != h.q || k.data != h.k || v.data != h.v || !rope_store_fits(h.layer, q, k, v, h.head_dim, h.rc)) return false;
    const auto& s = layout.layers[h.layer];
    const cuda::RopeParams rp = rope_params(h.rc);
    r.kv = cuda::KvPoolView{pool, block_elems, k_off[h.layer], v_off[h.layer], int(layout.block_size), int(s.n_kv_heads), int(s.head_dim_k), kv_type, int64_t(num_blocks)};
    if (!cuda::rope_kv_rows_takes(rp, int(h.head_dim), r.kv)) return false;
    r.q_cols = q.cols, r.head_dim = int(h.head_dim), r.half = rp.half, r.interleaved = rp.interleaved, r.slots = d_slots;
    if (!cuda::dq_rope_supports(segs, count, r)) return false;
    r.q16 = grow(q16_buf, size_t(q.rows * q.cols) * 2, "rotated q (16-bit)");  // rope_attention_rows' buffer
    r.cs = rope_table(rp, q.rows);
    return true;
  }
  void forget_q8() {
    q8_of = nullptr;
    q8r_of = nullptr;
    bf16_of = nullptr;
    bf16_at = nullptr;
    f16_of = nullptr;
  }
  bool int8_for(TensorType type, int64_t k) const { return int8_gemv && cuda::int8_gemv_supports(type, k); }
  // Whether a matmul of m token rows takes the int8 GEMV rows (round 8; every row count in the
  // deterministic mode) rather than the many-row paths.
  bool int8_rows_for(TensorType type, int64_t m, int64_t k) const {
    if (!int8_for(type, k)) return false;
    if (deterministic) return true;
    // Up to kMaxI8Rows rows the rows limit (VELLUM_CUDA_I8_ROWS) holds for both kernels; past it
    // only the tensor-core kernel takes them (round 51).
    if (mma_rows_for(type, m, k)) return m <= std::min<int64_t>(i8_rows_max, cuda::kMaxI8Rows) || m > cuda::kMaxI8Rows;
    return m <= std::min<int64_t>(type == TensorType::Q8_0 ? i8_rows_q8 : i8_rows_max, cuda::kMaxI8Rows);
  }
  bool mma_rows_for(TensorType type, int64_t m, int64_t k) const {
    const int64_t least = gemv_mma_min > 0 ? gemv_mma_min : 3;
    return gemv_mma && !deterministic && m >= std::max<int64_t>(2, least) && m <= std::min<int64_t>(gemv_mma_max, cuda::kMmaRowsMax) &&
           int8_gemv && cuda::gemv_mma_supports(type, k);
  }
  // x's int8 rows for the int8 rows kernels (mma: gemv_mma's tiled layout): the copy the last such
  // matmul left when it is x's (Q, K and V read one x), else x_q8_rows, to be quantized first
  // (quantize). Recorded as x's copy; a caller whose output overlaps x forgets it.
  void* q8_rows_input(const Tensor& x, bool mma, bool& quantize) {
    quantize = !(x.data == q8r_of && x.rows == q8r_rows && x.cols == q8r_cols && mma == q8r_mma);
    return quantize ? q8_rows_for(x, mma) : x_q8_rows.get();
  }
  // x_q8_rows sized for x's int8 rows in that layout, recorded as x's copy (to be written next).
  void* q8_rows_for(const Tensor& x, bool mma) {
    const int64_t M = x.rows, K = x.cols;
    void* p = grow(x_q8_rows, mma ? cuda::mma_x_bytes(K, int(M)) : size_t(M) * cuda::q8_bytes(K), "matmul activations (int8 rows)");
    q8r_of = x.data, q8r_rows = M, q8r_cols = K, q8r_mma = mma;
    return p;
  }
  // x (rows M, K columns) quantized into q8_rows_input's layout.
  cudaError_t quantize_rows(bool mma, const float* x, int64_t M, int64_t K, void* q8) const {
    return mma ? cuda::launch_quantize_mma_x(x, K, int(M), K, q8, stream) : cuda::launch_quantize_q8_rows(x, K, int(M), K, q8, stream);
  }
  // A fused 2-16-row launch recorded (round 52): its stats, and the layout of its x, which a norm of
  // that shape writes next (norm_q8_rows).
  void rows_fused_recorded(int64_t M, int64_t K, bool mma, bool quantized) {
    ++rows_fused_stats.calls;
    rows_fused_stats.quantized += quantized;
    rows_hint_m = M, rows_hint_k = K, rows_hint_mma = mma;
  }
  // Round 52: where a norm of `out` (2-16 rows) should also write its int8 rows copy: the layout the
  // last fused launch read, when out has its shape (else none). Recorded as out's copy; call after
  // norm_q8 (which forgets the copies).
  // norm: counted as a norm's copy (attention counts its own).
  cuda::NormRowsQ8 norm_q8_rows(const Tensor& out, bool norm = true) {
    const int64_t M = out.rows, K = out.cols;
    if (!rows_fused || M < 2 || M > cuda::kMmaRowsMax || M != rows_hint_m || K != rows_hint_k || K % 256 != 0) return {};
    const bool mma = rows_hint_mma;
    void* p = q8_rows_for(out, mma);
    rows_fused_stats.norm_copies += norm;
    return {p, mma ? 0 : cuda::q8_bytes(K), mma ? cuda::mma_tiles(int(M)) : 0};
  }
  // Where a norm of `out` should also write its int8 copy (nullptr: it should not).
  void* norm_q8(const Tensor& out) {
    forget_q8();
    if (out.rows != 1 || out.cols % 32 != 0 || !int8_gemv) return nullptr;
    void* p = grow(x_q8_norm, cuda::q8_bytes(out.cols), "normed activations (int8)");
    q8_of = out.data;
    q8_cols = out.cols;
    return p;
  }
  // A workspace that may hold the current bf16 copy: the copy is gone if it is reallocated.
  void* grow_bf16(cuda::DeviceBuffer& b, size_t bytes, const char* what) {
    const void* old = b.get();
    void* p = grow(b, bytes, what);
    if (p != old && bf16_at == old) bf16_of = nullptr, bf16_at = nullptr;
    return p;
  }
  // Where a norm of `out` (2+ rows) should also write its 16-bit copy (nullptr: it should not), after
  // norm_q8: bf16, or f16 (copy_f16) when most matmul weights are F16 (copies_f16, round 14).
  void* norm_copy16(const Tensor& out, bool& copy_f16) {
    copy_f16 = copies_f16;
    if (out.rows < 2 || !bf16_act || deterministic) return nullptr;
    const int64_t n = out.rows * out.cols;
    if (copies_f16) {
      void* p = grow(x_f16, size_t(n) * 2, "matmul activations (f16)");
      f16_of = out.data, f16_elems = n, f16_at = p;
      return p;
    }
    void* p = grow_bf16(x_bf16, size_t(n) * 2, "matmul activations (bf16)");
    bf16_of = out.data, bf16_elems = n, bf16_at = p;
    return p;
  }
  // Weight elements uploaded, all and F16: the norms write f16 copies when F16 holds the majority.
  int64_t weight_elems = 0, f16_weight_elems = 0;
  bool copies_f16 = false;
  // x's rows in bf16 for a cuBLAS GEMM: the copy a producer or the previous matmul left, else
  // converted into x_bf16 now (recorded as its own op).
  const void* bf16_input(const Tensor& x) {
    const int64_t n = x.rows * x.cols;
    if (bf16_at != nullptr && bf16_of == x.data && bf16_elems == n) return bf16_at;
    touch({x});
    void* xb = grow_bf16(x_bf16, size_t(n) * 2, "matmul activations (bf16)");
    bf16_of = x.data;
    bf16_elems = n;
    bf16_at = xb;
    record_to16(x.data, n, xb, false);
    return xb;
  }
  // Records the conversion of n f32 values at src into dst (bf16, or f16 when f16) as its own op.
  void record_to16(const float* src, int64_t n, void* dst, bool f16) {
    graphs.mix(41, src, n, dst, f16);
    graphs.run([=, this] {
      launched(f16 ? cuda::launch_f32_to_f16(src, dst, n, stream) : cuda::launch_f32_to_bf16(src, dst, n, stream), "f32_to_16 kernel");
    });
  }
  // x's rows in f16 for a cuBLAS GEMM with F16 weights: the previous matmul's copy of the same
  // rows, else converted into x_f16 now (recorded as its own op).
  const void* f16_input(const Tensor& x) {
    const int64_t n = x.rows * x.cols;
    if (f16_of == x.data && f16_elems == n) return f16_at;
    touch({x});
    void* xh = grow(x_f16, size_t(n) * 2, "matmul activations (f16)");
    f16_of = x.data, f16_elems = n, f16_at = xh;
    record_to16(x.data, n, xh, true);
    return xh;
  }
  // Whether matmul() takes the bf16 cuBLAS path for `M` rows of a `type` weight with `K` columns
  // (F16 weights take their own f16 GEMM); `w`, the weight's data, where it may have a dense copy.
  bool cublas_bf16(TensorType type, int64_t M, int64_t K, int64_t N, const void* w = nullptr) const {
    if (deterministic || type == TensorType::F32 || type == TensorType::F16 || M < 2) return false;
    const bool plain = type == TensorType::F16 || type == TensorType::BF16;
    if (M <= (plain ? gemv_max_rows_plain : gemv_max_rows_quant) || dq_mma_for(type, M, K, N, w)) return false;
    return !(M <= mmq_max_rows && mmq && cuda::mmq_supports(type, K));
  }
  // Above this many rows a weight's dense copy on cuBLAS beats dq_mma (round 21, H100, llama3-8b
  // Q4_K_M decode at 1k context: 64 sequences 5 427 -> 6 069 tok/s, 128: 7 012 -> 8 781; at 32,
  // dq_mma 3 754 against 2 770).
  static constexpr int64_t kDenseDqMaxRows = 32;
  bool dq_mma_for(TensorType type, int64_t M, int64_t K, int64_t N, const void* w = nullptr) const {
    if (deterministic || !cuda::dq_mma_supports(type, K)) return false;
    if (dq_mma) return M >= dq_min_rows && M <= dq_max_rows;
    if (w != nullptr && M > kDenseDqMaxRows && dense.count(w) != 0) return false;
    if (tma_for(type, M, K)) return true;
    if (!dq_auto || M < dq_auto_min_rows || N < dq_auto_min_n) return false;
    return type == TensorType::Q8_0 ? M <= dq_auto_q8_max_rows : M <= dq_auto_max_rows;
  }
  bool tma_for(TensorType type, int64_t M, int64_t K) const {
    if (dq_tma == 0 || M < dq_tma_min_rows || !cuda::dq_tma_supports(type, K)) return false;
    return dq_tma == 2 || M <= dq_tma_max_rows;
  }
  // The K split's partial sums and arrival counters of a dq_mma / dq_tma plan (none unsplit).
  void dq_scratch(const cuda::DqMmaPlan& plan, float*& ws, int32_t*& cnt) {
    ws = nullptr;
    cnt = nullptr;
    if (plan.splits <= 1) return;
    ws = static_cast<float*>(grow(dq_ws, plan.ws_floats * sizeof(float), "matmul partial sums"));
    const void* old_cnt = dq_cnt.get();
    const size_t old_size = dq_cnt.size();
    cnt = static_cast<int32_t*>(grow(dq_cnt, plan.counters * sizeof(int32_t), "matmul counters"));
    if (cnt != old_cnt || dq_cnt.size() != old_size) {  // zeroed once; every launch leaves them zero
      check(cudaMemsetAsync(cnt, 0, dq_cnt.size(), stream), "matmul counters");
    }
  }
  // The plan of a matmul that dq_mma_for chose: which kernel (DqMmaPlan::rs) and its tiles.
  cuda::DqMmaPlan dq_plan(TensorType type, int64_t M, int64_t K, int64_t N) const {
    int rs = cuda::dq_mma_rs_supports(type, K) ? std::min(dq_rs, 2) : 0;
    if (dq_rs >= 3 && cuda::dq_tma_supports(type, K)) rs = dq_rs;
    if (dq_rs < 3 && !dq_mma && tma_for(type, M, K)) rs = dq_tma_kind;  // not where dq_mma is forced
    if (rs >= 3) return cuda::dq_tma_plan(N, K, M, sms, dq_tma_bt, dq_splits, rs, type);
    cuda::DqMmaPlan plan = cuda::dq_mma_plan(N, K, M, sms, dq_splits);
    plan.rs = rs;
    return plan;
  }
  // Rows of a dequantized weight tile (BF16 weights are read in place: all rows).
  int64_t weight_tile_elems = kWeightTileElems;
  int64_t weight_tile(TensorType type, int64_t N, int64_t K) const {
    return type == TensorType::BF16 ? N : std::max<int64_t>(1, std::min(N, weight_tile_elems / K));
  }
  // out (otype, leading dimension ldo) = xb · Wᵀ: BF16 weights in place, other types dequantized
  // `tile` rows at a time into wb. Runs inside a recorded op.
  void gemm_bf16(TensorType type, const void* wd, int64_t N, int64_t K, const void* xb, int64_t M, void* out,
                 cudaDataType_t otype, int64_t ldo, int64_t tile, void* wb) {
    const float one = 1.0f, zero = 0.0f;
    const size_t osize = otype == CUDA_R_32F ? sizeof(float) : 2;
    if (ahead_for(type, N, tile) && !graphs.capturing()) {
      const void* a = ahead.get(type, wd, N, K, stream);  // dequantized ahead on a side stream, or now
      check(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &one, a, CUDA_R_16BF, int(K), xb,
                         CUDA_R_16BF, int(K), &zero, out, otype, int(ldo), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx (bf16)");
      return;
    }
    for (int64_t o0 = 0; o0 < N; o0 += tile) {
      const int64_t nt = std::min(tile, N - o0);
      const void* a = wd;
      if (type != TensorType::BF16) {
        launched(cuda::launch_dequant_bf16(type, wd, o0, nt, K, wb, stream), "dequant_bf16 kernel");
        a = wb;
      }
      check(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(nt), int(M), int(K), &one, a, CUDA_R_16BF, int(K), xb,
                         CUDA_R_16BF, int(K), &zero, static_cast<uint8_t*>(out) + o0 * osize, otype, int(ldo),
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx (bf16)");
    }
  }
  // Whether gemm_bf16 takes `ahead` for a weight (one tile, quantized) when not under capture. An
  // op recorded outside a graph step runs at once, uncaptured: it needs no wb tile of its own.
  bool ahead_for(TensorType type, int64_t N, int64_t tile) const {
    return type != TensorType::BF16 && tile >= N && dequant_ahead_on;
  }
  void* weight_tile_buffer(TensorType type, int64_t N, int64_t K, int64_t tile) {
    if (type == TensorType::BF16 || (ahead_for(type, N, tile) && !graphs.recording())) return nullptr;
    return grow(w_bf16, size_t(tile * K) * 2, "matmul weight tile (bf16)");
  }
  // Two 16-bit GEMMs of one shape over the same x (K and V; gate and up) as one strided-batched
  // cuBLAS call: any two weights are base + stride. w0 < w1 and o0 < o1 (the caller orders them).
  // Weights and x are `in` (bf16, or f16 for F16 weights).
  void gemm_pair(const void* w0, const void* w1, int64_t N, int64_t K, const void* x16, int64_t M, void* o0, void* o1,
                 cudaDataType_t otype, int64_t ldo, cudaDataType_t in = CUDA_R_16BF) const {
    const float one = 1.0f, zero = 0.0f;
    const size_t osize = otype == CUDA_R_32F ? sizeof(float) : 2;
    const long long sa = (static_cast<const uint8_t*>(w1) - static_cast<const uint8_t*>(w0)) / 2;
    const long long sc = (static_cast<uint8_t*>(o1) - static_cast<uint8_t*>(o0)) / static_cast<long long>(osize);
    check(cublasGemmStridedBatchedEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &one, w0, in, int(K), sa, x16, in,
                                     int(K), 0, &zero, o0, otype, int(ldo), sc, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx (16-bit pair)");
  }
  // F16 weights as stored times x's f16 rows (round 14), out of otype with leading dimension ldo.
  void gemm_f16(const void* w, int64_t N, int64_t K, const void* xh, int64_t M, void* out, cudaDataType_t otype,
                int64_t ldo) const {
    const float one = 1.0f, zero = 0.0f;
    check(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &one, w, CUDA_R_16F, int(K), xh, CUDA_R_16F,
                       int(K), &zero, out, otype, int(ldo), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx (f16)");
  }
  // x as int8 for a batch-1 int8 GEMV: the norm's copy when it is x's (quantize = false), else the
  // x_q8 workspace that the caller fills with launch_quantize_q8.
  void* q8_input(const Tensor& x, bool& quantize) {
    quantize = !has_q8_copy(x);
    return quantize ? grow(x_q8, cuda::q8_bytes(x.cols), "matmul activations (int8)") : x_q8_norm.get();
  }
  // Batch-1 matmul of x by every segment's weight (all of `type`, x.cols columns): one launch of the
  // int8 GEMV (after quantizing x, unless a norm already did) or of the f32 one.
  // rn (round 43): x is a pending row norm's h (layer_tail_row); the launch reads z's int8 copy and
  // scales by its s instead, and h is neither read nor materialized.
  void gemv_batch1(TensorType type, const cuda::GemvSegs& segs, const Tensor& x, const RowNormX* rn = nullptr) {
    if (rn == nullptr) touch({x});
    const int64_t K = x.cols;
    const float* xd = x.data;
    if (det16_for(type, K)) {  // the deterministic mode's tensor-core arithmetic, which its many rows share
      for (int i = 0; i < segs.count; ++i) wrote(Tensor{segs.out[i], 1, segs.rows[i]});
      graphs.mix(51, type, K, xd, segs.count);
      for (int i = 0; i < segs.count; ++i) graphs.mix(segs.w[i], segs.rows[i], segs.out[i], segs.bias[i]);
      graphs.run([=, this] {
        if (!skip(16)) launched(cuda::launch_det16_gemv(type, segs, K, xd, K, 1, 0, stream), "det16 gemv kernel");
      });
      return;
    }
    const bool i8 = int8_for(type, K);
    bool quantize = false;
    void* q8 = rn != nullptr ? rn->q8 : i8 ? q8_input(x, quantize) : nullptr;
    const cuda::RowNormIn nin = rn != nullptr ? rn->in : cuda::RowNormIn{};
    for (int i = 0; i < segs.count; ++i) wrote(Tensor{segs.out[i], 1, segs.rows[i]});
    graphs.mix(3, type, K, xd, q8, quantize, segs.count, nin.partial, nin.eps);
    for (int i = 0; i < segs.count; ++i) graphs.mix(segs.w[i], segs.rows[i], segs.out[i], segs.bias[i]);
    graphs.run([=, this] {
      if (!i8) {
        if (!skip(16)) launched(cuda::launch_gemv1(type, segs, K, xd, stream), "gemv kernel");
        return;
      }
      if (quantize && !skip(8)) launched(cuda::launch_quantize_q8(xd, K, q8, stream), "quantize_q8 kernel");
      if (!skip(16)) launched(cuda::launch_gemv_i8(type, segs, K, q8, stream, nin), "int8 gemv kernel");
    });
  }
  // Two int8 launches of one x row as one (round 29, gemv_kernels.h): the default mode's Q4_K and
  // Q6_K kernels (the ablation's GEMV skip keeps two launches).
  bool gemv_pair_for(TensorType ta, const cuda::GemvSegs& a, TensorType tb, const cuda::GemvSegs& b, int64_t K) const {
    return gemv_pair && !deterministic && ablate == 0 && int8_for(ta, K) && int8_for(tb, K) &&
           cuda::gemv_i8_pair_supports(ta, a, tb, b, K);
  }
  void gemv_batch1_pair(TensorType ta, const cuda::GemvSegs& a, TensorType tb, const cuda::GemvSegs& b, const Tensor& x,
                        const RowNormX* rn = nullptr) {
    if (rn == nullptr) touch({x});
    const int64_t K = x.cols;
    const float* xd = x.data;
    bool quantize = false;
    void* q8 = rn != nullptr ? rn->q8 : q8_input(x, quantize);
    const cuda::RowNormIn nin = rn != nullptr ? rn->in : cuda::RowNormIn{};
    for (const cuda::GemvSegs* s : {&a, &b}) {
      for (int i = 0; i < s->count; ++i) wrote(Tensor{s->out[i], 1, s->rows[i]});
    }
    ++gemv_pair_calls;
    graphs.mix(56, ta, tb, K, xd, q8, quantize, a.count, b.count, nin.partial, nin.eps);
    for (const cuda::GemvSegs* s : {&a, &b}) {
      for (int i = 0; i < s->count; ++i) graphs.mix(s->w[i], s->rows[i], s->out[i], s->bias[i]);
    }
    graphs.run([=, this] {
      if (quantize) launched(cuda::launch_quantize_q8(xd, K, q8, stream), "quantize_q8 kernel");
      launched(cuda::launch_gemv_i8_pair(ta, a, tb, b, K, q8, stream, nin), "int8 gemv kernel (pair)");
    });
  }
  void gemv_multi_row(const Tensor& x, std::span<const backend::Backend::MatmulOut> outs, const RowNormX* rn);
  void wrote(const Tensor& out) {  // an op wrote `out`: a cached copy is stale if they overlap
    touch({}, {out});
    if (q8_of != nullptr && out.data < q8_of + q8_cols && q8_of < out.data + out.elements()) q8_of = nullptr;
    if (q8r_of != nullptr && out.data < q8r_of + q8r_rows * q8r_cols && q8r_of < out.data + out.elements()) q8r_of = nullptr;
    if (bf16_of != nullptr && out.data < bf16_of + bf16_elems && bf16_of < out.data + out.elements()) bf16_of = nullptr;
    if (f16_of != nullptr && out.data < f16_of + f16_elems && f16_of < out.data + out.elements()) f16_of = nullptr;
  }

  // A workspace that may be reallocated: a recorded step runs eagerly from here on, since its
  // stored ops may hold the old address.
  void* grow(cuda::DeviceBuffer& b, size_t bytes, const char* what) {
    if (b.get() == nullptr || bytes > b.size()) graphs.flush();
    return b.ensure(bytes, what);
  }

  // Experiment only (VELLUM_CUDA_ABLATE, a bit mask): skip launching a class of batch-1 kernels to
  // measure what it costs inside a decode step; the results are wrong. 1 norms, 2 rope + K/V store,
  // 4 attention, 8 x quantization, 16 GEMVs.
  unsigned ablate = [] {
    const char* e = std::getenv("VELLUM_CUDA_ABLATE");
    return e != nullptr ? unsigned(std::atoi(e)) : 0u;
  }();
  bool skip(unsigned bit) const { return (ablate & bit) != 0; }

  void use_device() const { check(cudaSetDevice(device), "cudaSetDevice"); }
  void launched(cudaError_t rc, const char* op) const { check(rc, op); }

  void free_chunks() {
    for (const Chunk& c : chunks) cuda::device_free(c.ptr);
    chunks.clear();
    chunk_used = 0;
  }
};

CudaBackend::CudaBackend(int device) : impl_(std::make_unique<Impl>()) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (device < 0 || device >= count) throw_error("CUDA backend: device {} does not exist ({} visible)", device, count);
  Impl& m = *impl_;
  m.device = device;
  m.use_device();
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  if (prop.major < 8) throw_error("CUDA backend: {} is compute capability {}.{}; this build targets sm_90", prop.name, prop.major, prop.minor);
  m.device_name = prop.name;
  check(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const char* graphs = std::getenv("VELLUM_CUDA_GRAPHS");
  m.graphs.enabled = graphs == nullptr || std::string(graphs) != "0";
  if (const char* r = std::getenv("VELLUM_CUDA_GRAPH_ROWS"); r != nullptr) m.graph_max_rows = size_t(std::max(0, std::atoi(r)));
  const char* pdl = std::getenv("VELLUM_CUDA_PDL");
  m.graphs.programmatic = prop.major >= 9 && (pdl == nullptr || std::string(pdl) != "0");
  // VELLUM_CUDA_ATTN_TC_ROWS=N: set_attention_tc_rows(N) for whole programs (0 turns it off).
  if (const char* tc = std::getenv("VELLUM_CUDA_ATTN_TC_ROWS"); tc != nullptr) m.attn_tc_rows = std::atoi(tc);
  // VELLUM_CUDA_BF16_ACT=0 / _LAZY_SWIGLU=0 / _GEMM_PAIRS=0: the setters below for whole programs.
  if (const char* b = std::getenv("VELLUM_CUDA_BF16_ACT"); b != nullptr) m.bf16_act = std::string(b) != "0";
  if (const char* b = std::getenv("VELLUM_CUDA_LAZY_SWIGLU"); b != nullptr) m.lazy_swiglu = std::string(b) != "0";
  if (const char* b = std::getenv("VELLUM_CUDA_GEMM_PAIRS"); b != nullptr) m.gemm_pairs = std::string(b) != "0";
  if (const char* b = std::getenv("VELLUM_CUDA_SWIGLU_ROWS"); b != nullptr) m.swiglu_rows = std::string(b) != "0";
  if (const char* b = std::getenv("VELLUM_CUDA_ROPE_ROWS"); b != nullptr) m.rope_rows = std::string(b) != "0";
  if (const char* b = std::getenv("VELLUM_CUDA_QKV_ROPE"); b != nullptr) m.qkv_rope = std::string(b) != "0";
  if (const char* b = std::getenv("VELLUM_CUDA_RESIDUAL_ROWS"); b != nullptr) m.residual_rows = std::string(b) != "0";
  // Experiments (round 8): the dequantized weight tile in MiB of BF16, and set_mmq_max_rows.
  if (const char* t = std::getenv("VELLUM_CUDA_WEIGHT_TILE_MIB"); t != nullptr && std::atoi(t) > 0) {
    m.weight_tile_elems = int64_t(std::atoi(t)) << 19;
  }
  if (const char* r = std::getenv("VELLUM_CUDA_MMQ_MAX_ROWS"); r != nullptr) m.mmq_max_rows = std::max(0, std::atoi(r));
  if (const char* a = std::getenv("VELLUM_CUDA_DEQUANT_AHEAD"); a != nullptr) m.dequant_ahead_on = std::string(a) != "0";
  if (const char* a = std::getenv("VELLUM_CUDA_DET16"); a != nullptr) m.det16 = std::string(a) != "0";
  // Measurement knob (the checks' and benches' backends have no engine flags): dense copies, MiB.
  if (const char* a = std::getenv("VELLUM_CUDA_DENSE_CACHE_MIB"); a != nullptr) m.dense_budget = uint64_t(std::atoll(a)) << 20;
  if (const char* r = std::getenv("VELLUM_CUDA_I8_ROWS"); r != nullptr) m.i8_rows_max = m.i8_rows_q8 = std::max(0, std::atoi(r));
  if (const char* r = std::getenv("VELLUM_CUDA_GEMV_MMA"); r != nullptr) m.gemv_mma = std::string(r) != "0";
  if (const char* r = std::getenv("VELLUM_CUDA_GEMV_MMA_MIN"); r != nullptr) m.gemv_mma_min = std::max(0, std::atoi(r));
  if (const char* r = std::getenv("VELLUM_CUDA_GEMV_MMA_MAX"); r != nullptr) m.gemv_mma_max = std::max(0, std::atoi(r));
  if (const char* r = std::getenv("VELLUM_CUDA_ROWS_FUSED"); r != nullptr) m.rows_fused = std::string(r) != "0";
  m.sms = prop.multiProcessorCount;
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_MMA"); d != nullptr) m.dq_mma = m.dq_auto = std::string(d) != "0";
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_MMA_ROWS"); d != nullptr) {
    long long lo = 0, hi = 0;
    if (std::sscanf(d, "%lld,%lld", &lo, &hi) == 2) m.dq_min_rows = lo, m.dq_max_rows = hi;
  }
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_MMA_SPLITS"); d != nullptr) m.dq_splits = std::max(0, std::atoi(d));
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_RS"); d != nullptr) m.dq_rs = std::clamp(std::atoi(d), 0, 4);
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_TMA"); d != nullptr) m.dq_tma = std::clamp(std::atoi(d), 0, 2);
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_TMA_KIND"); d != nullptr) m.dq_tma_kind = std::clamp(std::atoi(d), 3, 4);
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_TMA_MAX"); d != nullptr) m.dq_tma_max_rows = std::atoll(d);
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_TMA_MIN"); d != nullptr) m.dq_tma_min_rows = std::max<int64_t>(2, std::atoll(d));
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_TMA_BT"); d != nullptr) m.dq_tma_bt = std::atoi(d);
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_GROUP"); d != nullptr) m.dq_group = std::string(d) != "0";
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_SWIGLU"); d != nullptr) m.dq_swiglu = std::string(d) != "0";
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_CUT_SPLIT"); d != nullptr) m.dq_cut_split = std::string(d) != "0";
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_AUTO_MAX"); d != nullptr) m.dq_auto_max_rows = std::atoll(d);
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_AUTO_MIN_N"); d != nullptr) m.dq_auto_min_n = std::atoll(d);
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_AUTO_MIN"); d != nullptr) m.dq_auto_min_rows = std::atoll(d);
  if (const char* d = std::getenv("VELLUM_CUDA_DQ_AUTO_Q8_MAX"); d != nullptr) m.dq_auto_q8_max_rows = std::atoll(d);
  check(cublasCreate(&m.blas), "cublasCreate");
  check(cublasSetStream(m.blas, m.stream), "cublasSetStream");
  check(cublasSetMathMode(m.blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");  // F32 stays F32 (no TF32)
  m.blas_ws = cuda::device_alloc(Impl::kBlasWorkspace, "cuBLAS workspace");
  check(cublasSetWorkspace(m.blas, m.blas_ws, Impl::kBlasWorkspace), "cublasSetWorkspace");
}

CudaBackend::~CudaBackend() {
  Impl& m = *impl_;
  (void)cudaSetDevice(m.device);
  try {
    m.graphs.flush();
  } catch (const std::exception&) {  // a destructor must not throw; the stream is synchronized below
  }
  if (m.stream != nullptr) (void)cudaStreamSynchronize(m.stream);
  m.ahead.drain();
  for (void* w : m.weights) cuda::device_free(w);
  m.free_chunks();
  cuda::device_free(m.pool);
  if (m.blas != nullptr) (void)cublasDestroy(m.blas);
  cuda::device_free(m.blas_ws);
  if (m.stream != nullptr) (void)cudaStreamDestroy(m.stream);
}

std::string CudaBackend::name() const { return fmt::format("cuda:{} ({})", impl_->device, impl_->device_name); }

size_t CudaBackend::weight_bytes() const { return impl_->weight_bytes; }
void CudaBackend::set_gemv_max_rows(int rows) {
  impl_->gemv_max_rows_plain = impl_->gemv_max_rows_quant = std::clamp(rows, 0, cuda::kMaxGemvRows);
}
void CudaBackend::set_int8_gemv(bool on) {
  impl_->forget_q8();
  impl_->int8_gemv = on;
}
void CudaBackend::set_deterministic(bool on) {
  impl_->forget_q8();
  impl_->deterministic = on;
}
void CudaBackend::set_mmq(bool on) { impl_->mmq = on; }
void CudaBackend::set_layer_kernel(bool on) { impl_->layer_kernel = on; }
int64_t CudaBackend::layer_kernel_calls() const { return impl_->layer_kernel_calls; }
void CudaBackend::set_row_norm(bool on) { impl_->row_norm = on; }
int64_t CudaBackend::row_norm_calls() const { return impl_->row_norm_calls; }
int64_t CudaBackend::rope_row_calls() const { return impl_->rope_row_calls; }
int64_t CudaBackend::rope_rows_calls() const { return impl_->rope_rows_calls; }
void CudaBackend::set_qkv_rope(bool on) { impl_->qkv_rope = on; }
int64_t CudaBackend::qkv_rope_calls() const { return impl_->qkv_rope_calls; }
void CudaBackend::expect_rope(uint32_t layer, const Tensor& q, const Tensor& k, const Tensor& v, uint32_t head_dim, const RopeConfig& rc) {
  impl_->rope_hint = {true, layer, head_dim, q.data, k.data, v.data, rc};
}
int64_t CudaBackend::residual_rows_calls() const { return impl_->residual_rows_calls; }
void CudaBackend::set_residual_rows(bool on) { impl_->residual_rows = on; }
void CudaBackend::set_rope_rows(bool on) { impl_->rope_rows = on; }
int64_t CudaBackend::gemv_pair_calls() const { return impl_->gemv_pair_calls; }
CudaBackend::RowsFusedStats CudaBackend::rows_fused_stats() const { return impl_->rows_fused_stats; }
void CudaBackend::set_dq_mma(bool on) { impl_->dq_mma = impl_->dq_auto = on; }
void CudaBackend::set_dq_rs(int kernel) { impl_->dq_rs = std::clamp(kernel, 0, 4); }
void CudaBackend::set_dq_tma(int mode) { impl_->dq_tma = std::clamp(mode, 0, 2); }
void CudaBackend::set_dq_tma_group(bool on) { impl_->dq_group = on; }
int64_t CudaBackend::dq_tma_group_calls() const { return impl_->dq_group_calls; }
int64_t CudaBackend::dq_wave_split_calls() const { return impl_->dq_wave_splits; }
void CudaBackend::set_dq_tma_swiglu(bool on) { impl_->dq_swiglu = on; }
void CudaBackend::set_dq_swiglu_split_tail(bool on) { impl_->dq_cut_split = on; }
int64_t CudaBackend::dq_tma_swiglu_calls() const { return impl_->dq_swiglu_calls; }
void CudaBackend::set_dq_tma_plan(int token_tile, int splits) {
  impl_->dq_tma_bt = std::max(0, token_tile);
  impl_->dq_splits = std::max(0, splits);
}
int CudaBackend::dq_rs() const { return impl_->dq_rs; }
void CudaBackend::set_dq_mma_rows(int64_t min_rows, int64_t max_rows) {
  impl_->dq_min_rows = min_rows;
  impl_->dq_max_rows = max_rows;
}
bool CudaBackend::has_int8_copy(const Tensor& x) const { return impl_->has_q8_copy(x); }
void CudaBackend::set_gemv_mma(bool on) { impl_->gemv_mma = on; }
void CudaBackend::set_rows_fused(bool on) { impl_->rows_fused = on; }
void CudaBackend::set_int8_gemv_max_rows(int rows) { impl_->i8_rows_max = impl_->i8_rows_q8 = std::max(0, rows); }
void CudaBackend::set_bf16_activations(bool on) {
  impl_->materialize();
  impl_->forget_q8();
  impl_->bf16_act = on;
}
void CudaBackend::set_gemm_pairs(bool on) { impl_->gemm_pairs = on; }
void CudaBackend::set_swiglu_rows(bool on) {
  impl_->materialize();
  impl_->swiglu_rows = on;
}
void CudaBackend::set_lazy_swiglu(bool on) {
  impl_->materialize();
  impl_->lazy_swiglu = on;
}
void CudaBackend::set_mmq_max_rows(int64_t rows) { impl_->mmq_max_rows = rows; }
void CudaBackend::set_attention_tc_rows(int rows) { impl_->attn_tc_rows = rows; }
void CudaBackend::set_det_attention_tc(bool on) { impl_->det_attn_tc = on; }
void CudaBackend::set_cuda_graphs(bool on) {
  impl_->graphs.flush();
  impl_->graphs.enabled = on;
}
void CudaBackend::set_graph_max_rows(int rows) {
  impl_->graphs.flush();
  impl_->graph_max_rows = size_t(std::max(0, rows));
}
void CudaBackend::set_programmatic_launch(bool on) { impl_->graphs.set_programmatic(on); }
void CudaBackend::set_early_launch(bool on) { impl_->early_launch = on; }
CudaBackend::GraphStats CudaBackend::graph_stats() const {
  const auto& g = impl_->graphs;
  GraphStats st{g.captures, g.replays, g.eager_fallbacks, g.programmatic_edges, g.evictions};
  st.capture_seconds = g.capture_seconds;
  st.early_hits = g.early_hits;
  st.early_misses = g.early_misses;
  return st;
}

std::string CudaBackend::activity_report() const {
  const auto& g = impl_->graphs;
  const Impl& m = *impl_;
  const double ms = m.steps > 0 ? 1e3 / double(m.steps) : 0;
  const std::string dense = m.dense.empty() ? std::string()
                                            : fmt::format("; dense copies of {} weights ({:.0f} MiB)", m.dense.size(),
                                                          double(m.dense_bytes) / double(1 << 20));
  return fmt::format("{} steps: {} graph replays ({} launched early, {} early guesses done again), {} captures "
                     "({:.2f} s), {} eager fallbacks, {} evictions; dequantized ahead {} right / {} in line{}; host ms a "
                     "step: begin_step {:.3f}, ops recorded or launched {:.3f}, end-of-step launch {:.3f}, device wait {:.3f}",
                     m.steps, g.replays, g.early_hits, g.early_misses, g.captures, g.capture_seconds, g.eager_fallbacks,
                     g.evictions, m.ahead.hits(), m.ahead.misses(), dense, m.begin_seconds * ms, m.record_seconds * ms,
                     m.launch_seconds * ms, m.wait_seconds * ms);
}

void CudaBackend::set_dense_weight_cache(uint64_t bytes) { impl_->dense_budget = bytes; }
CudaBackend::DenseCacheStats CudaBackend::dense_cache_stats() const {
  return {impl_->dense.size(), impl_->dense_bytes};
}
CudaBackend::DequantAheadStats CudaBackend::dequant_ahead_stats() const {
  return {impl_->ahead.hits(), impl_->ahead.misses()};
}
void CudaBackend::set_dequant_ahead(bool on) {
  impl_->graphs.flush();  // recorded ops chose their wb tile with the old setting
  impl_->dequant_ahead_on = on;
}

// ---- memory -------------------------------------------------------------------------------------

Weight CudaBackend::upload_weight(const std::string& name, TensorType type, int64_t cols, int64_t rows,
                                  std::span<const uint8_t> bytes) {
  Impl& m = *impl_;
  m.use_device();
  if (!cuda::kernel_supports(type)) {
    throw_error("weight {}: type {} is not supported by the CUDA backend", name, tensor_type_name(type));
  }
  if (cols <= 0 || rows <= 0 || cols % traits(type).block_elements != 0) {
    throw_error("weight {}: {} x {} is not a whole number of {} blocks", name, rows, cols, tensor_type_name(type));
  }
  const uint64_t expected = row_bytes(type, static_cast<uint64_t>(cols)) * static_cast<uint64_t>(rows);
  if (bytes.size() != expected) throw_error("weight {}: {} bytes, expected {}", name, bytes.size(), expected);
  m.weight_elems += rows * cols;
  if (type == TensorType::F16) m.f16_weight_elems += rows * cols;
  m.copies_f16 = 2 * m.f16_weight_elems > m.weight_elems;
  const bool repack = cuda::needs_repack(type);
  const size_t device_bytes = repack ? cuda::device_row_bytes(type, cols) * size_t(rows) : bytes.size();
  void* final_ptr = cuda::device_alloc(device_bytes, "weight " + name);
  m.weights.push_back(final_ptr);
  m.weight_bytes += bytes.size();  // GGUF bytes: what a decode step must read (padding is not read)
  void* d = repack ? m.repack_tmp.ensure(bytes.size(), "weight repacking") : final_ptr;
  // Through two pinned buffers, so the memcpy of one chunk overlaps the DMA of the other.
  for (size_t off = 0, i = 0; off < bytes.size(); off += kUploadChunk, ++i) {
    const size_t n = std::min(kUploadChunk, bytes.size() - off);
    cuda::PinnedStaging& s = m.upload_staging[i % 2];
    std::memcpy(s.acquire(n), bytes.data() + off, n);
    s.upload(static_cast<uint8_t*>(d) + off, n, m.stream);
  }
  if (repack) m.launched(cuda::launch_repack(type, d, rows, cols, final_ptr, m.stream), "repack kernel");
  const uint64_t dense_bytes = uint64_t(rows) * uint64_t(cols) * 2;
  const bool quantized = type != TensorType::F32 && type != TensorType::F16 && type != TensorType::BF16;
  if (quantized && name != "token_embd.weight" && m.dense_bytes + dense_bytes <= m.dense_budget) {
    void* copy = cuda::device_alloc(dense_bytes, "dense copy of weight " + name);
    m.weights.push_back(copy);
    const int64_t tile = std::max<int64_t>(1, kWeightTileElems / cols);
    for (int64_t o0 = 0; o0 < rows; o0 += tile) {
      m.launched(cuda::launch_dequant_bf16(type, final_ptr, o0, std::min(tile, rows - o0), cols,
                                           static_cast<uint8_t*>(copy) + o0 * cols * 2, m.stream),
                 "dequant_bf16 kernel (dense copy)");
    }
    m.dense[final_ptr] = copy;
    m.dense_bytes += dense_bytes;
  }
  return Weight{name, type, cols, rows, final_ptr};
}

Tensor CudaBackend::scratch(int64_t rows, int64_t cols) {
  Impl& m = *impl_;
  if (rows < 0 || cols < 0) throw_error("CUDA backend: scratch of {} x {}", rows, cols);
  const size_t bytes = round_up(sizeof(float) * static_cast<size_t>(std::max<int64_t>(1, rows * cols)), kAlign);
  if (m.chunks.empty() || m.chunk_used + bytes > m.chunks.back().size) {
    m.use_device();
    const size_t size = std::max(kScratchChunk, bytes);
    m.chunks.push_back({cuda::device_alloc(size, "activation scratch"), size});
    m.chunk_used = 0;
  }
  float* p = reinterpret_cast<float*>(static_cast<uint8_t*>(m.chunks.back().ptr) + m.chunk_used);
  m.chunk_used += bytes;
  return Tensor{p, rows, cols};
}

void CudaBackend::release_scratch() {
  Impl& m = *impl_;
  m.forget_q8();
  m.lazy = {};  // the scratch tensors are gone
  m.lazy_norm = {};
  m.graphs.finish(m.stream);  // a step that read nothing
  if (m.chunks.size() > 1) {  // fold into one chunk that holds a whole step next time
    size_t total = 0;
    for (const auto& c : m.chunks) total += c.size;
    check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize");
    m.free_chunks();
    m.chunks.push_back({cuda::device_alloc(total, "activation scratch"), total});
  }
  m.chunk_used = 0;
}

void CudaBackend::init_kv(const kv::KvLayout& layout, uint32_t num_blocks) {
  Impl& m = *impl_;
  m.forget_q8();
  m.use_device();
  m.graphs.flush();
  layout.validate();
  std::vector<int64_t> k_off, v_off;
  for (uint32_t l = 0; l < layout.layers.size(); ++l) {
    const auto& s = layout.layers[l];
    if (!cuda::kv_type_supported(s.type) || s.type != layout.layers[0].type) {
      throw_error("CUDA backend: KV type {} in layer {} is not supported (F32, F16 or BF16, the same in every layer)",
                  tensor_type_name(s.type), l);
    }
    if (s.head_dim_k != s.head_dim_v) throw_error("CUDA backend: K and V head sizes differ in layer {}", l);
    const size_t elem = row_bytes(s.type, 1);
    k_off.push_back(static_cast<int64_t>(layout.k_offset(l) / elem));
    v_off.push_back(static_cast<int64_t>(layout.v_offset(l) / elem));
  }
  if (m.pool != nullptr) {
    check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize");
    cuda::device_free(m.pool);
    m.pool = nullptr;
  }
  const size_t bytes = layout.bytes_per_block() * num_blocks;
  m.pool = static_cast<uint8_t*>(cuda::device_alloc(bytes, fmt::format("the KV pool ({} blocks)", num_blocks)));
  check(cudaMemsetAsync(m.pool, 0, bytes, m.stream), "cudaMemsetAsync (KV pool)");
  m.layout = layout;
  m.num_blocks = num_blocks;
  m.kv_type = layout.layers[0].type;
  m.kv_elem = row_bytes(m.kv_type, 1);
  m.block_elems = static_cast<int64_t>(layout.bytes_per_block() / m.kv_elem);
  m.k_off = std::move(k_off);
  m.v_off = std::move(v_off);
}

uint32_t CudaBackend::kv_blocks() const { return impl_->num_blocks; }

bool CudaBackend::supports_kv_type(TensorType type) const { return cuda::kv_type_supported(type); }

std::optional<Backend::MemoryInfo> CudaBackend::memory_info() const {
  impl_->use_device();
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  return MemoryInfo{free_b, total_b};
}

double CudaBackend::device_wait_seconds() const { return impl_->wait_seconds; }

void CudaBackend::read(const Tensor& t, float* host) {
  Impl& m = *impl_;
  m.touch({t});
  m.use_device();
  m.launch_step();
  check(cudaMemcpyAsync(host, t.data, t.elements() * sizeof(float), cudaMemcpyDeviceToHost, m.stream), "cudaMemcpyAsync (read)");
  m.wait_for_stream("cudaStreamSynchronize (read)");
}

void CudaBackend::argmax_rows(const Tensor& x, std::span<int32_t> out) {
  Impl& m = *impl_;
  m.touch({x});
  if (out.size() != size_t(x.rows)) throw_error("argmax_rows: {} outputs for {} rows", out.size(), x.rows);
  m.use_device();
  if (x.rows == 0) return;
  if (x.rows > 65535) throw_error("argmax_rows: {} rows (at most 65535)", x.rows);
  const size_t bytes = out.size() * sizeof(int32_t), res = (bytes + 15) / 16 * 16;
  auto* d = static_cast<int32_t*>(m.grow(m.argmax_buf, res + cuda::argmax_workspace_bytes(x.rows, x.cols), "argmax results"));
  void* ws = reinterpret_cast<uint8_t*>(d) + res;
  m.graphs.mix(12, x.data, x.rows, x.cols, d, ws);
  m.graphs.run([=, &m] { m.launched(cuda::launch_argmax_rows(x.data, x.rows, x.cols, d, ws, m.stream), "argmax kernel"); });
  m.launch_step();  // the step ends here, as at read()
  check(cudaMemcpyAsync(out.data(), d, bytes, cudaMemcpyDeviceToHost, m.stream), "cudaMemcpyAsync (argmax)");
  m.wait_for_stream("cudaStreamSynchronize (argmax)");
}

void CudaBackend::top_k_rows(const Tensor& x, int k, std::span<float> values, std::span<int32_t> ids) {
  Impl& m = *impl_;
  m.touch({x});
  check_top_k_args(x.rows, x.cols, k, std::min(kMaxTopK, cuda::kMaxTopKDevice), values.size(), ids.size());
  const size_t n = size_t(x.rows) * size_t(k);
  m.use_device();
  if (x.rows == 0) return;
  if (x.rows > 65535) throw_error("top_k_rows: {} rows (at most 65535)", x.rows);
  const size_t res = (n * 4 + 15) / 16 * 16;  // each result array, 16-byte aligned
  auto* d = static_cast<uint8_t*>(m.grow(m.top_k_buf, 2 * res + cuda::top_k_workspace_bytes(x.rows, x.cols, k), "top-k results"));
  auto* dv = reinterpret_cast<float*>(d);
  auto* di = reinterpret_cast<int32_t*>(d + res);
  void* ws = d + 2 * res;
  m.graphs.mix(17, x.data, x.rows, x.cols, k, d);
  m.graphs.run([=, &m] { m.launched(cuda::launch_top_k_rows(x.data, x.rows, x.cols, k, dv, di, ws, m.stream), "top-k kernel"); });
  m.launch_step();  // the step ends here, as at read()
  check(cudaMemcpyAsync(values.data(), dv, n * 4, cudaMemcpyDeviceToHost, m.stream), "cudaMemcpyAsync (top-k values)");
  check(cudaMemcpyAsync(ids.data(), di, n * 4, cudaMemcpyDeviceToHost, m.stream), "cudaMemcpyAsync (top-k ids)");
  m.wait_for_stream("cudaStreamSynchronize (top-k)");
}

void CudaBackend::draw_rows(const Tensor& x, std::span<const RowDraw> draws, std::span<int32_t> out) {
  static_assert(sizeof(RowDraw) == sizeof(cuda::DrawArg) && offsetof(RowDraw, u) == offsetof(cuda::DrawArg, u) &&
                    offsetof(RowDraw, temperature) == offsetof(cuda::DrawArg, temperature) &&
                    offsetof(RowDraw, min_p) == offsetof(cuda::DrawArg, min_p) &&
                    offsetof(RowDraw, top_p) == offsetof(cuda::DrawArg, top_p),
                "the draws are copied to the device as they are");
  Impl& m = *impl_;
  m.touch({x});
  check_draw_args(x.rows, draws, out.size());
  m.use_device();
  if (x.rows == 0) return;
  if (x.rows > 65535) throw_error("draw_rows: {} rows (at most 65535)", x.rows);
  const size_t res = (out.size() * sizeof(int32_t) + 15) / 16 * 16, args = draws.size() * sizeof(RowDraw);
  auto* d = static_cast<uint8_t*>(m.grow(m.draw_buf, res + args + cuda::draw_rows_workspace_bytes(x.rows, x.cols), "drawn tokens"));
  auto* d_out = reinterpret_cast<int32_t*>(d);
  const auto* d_args = reinterpret_cast<const cuda::DrawArg*>(d + res);
  void* ws = d + res + args;
  // The draws change every step: normally uploaded with the step's inputs (StepInfo::draws), else
  // copied in now (before anything recorded for this step; an early graph read the old ones).
  const bool uploaded = m.d_draws != nullptr && m.step_draws.size() == draws.size() &&
                        std::memcmp(m.step_draws.data(), draws.data(), args) == 0;
  if (!uploaded) {
    check(cudaMemcpyAsync(d + res, draws.data(), args, cudaMemcpyHostToDevice, m.stream), "cudaMemcpyAsync (draws)");
    m.graphs.early_input_changed();
  } else {
    d_args = m.d_draws;
  }
  // Top-p's narrowing passes run only in steps where some row has top-p.
  const bool top_p = std::any_of(draws.begin(), draws.end(), [](const RowDraw& r) { return r.top_p < 1.0f; });
  m.graphs.mix(18, x.data, x.rows, x.cols, d, d_args, top_p);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_draw_rows(x.data, x.rows, x.cols, d_args, top_p, d_out, ws, m.stream), "draw kernels");
  });
  m.launch_step();  // the step ends here, as at read()
  check(cudaMemcpyAsync(out.data(), d_out, out.size() * sizeof(int32_t), cudaMemcpyDeviceToHost, m.stream), "cudaMemcpyAsync (drawn)");
  m.wait_for_stream("cudaStreamSynchronize (draws)");
}

void CudaBackend::log_normalizers(const Tensor& x, std::span<double> out) {
  Impl& m = *impl_;
  m.touch({x});
  if (out.size() != size_t(x.rows)) throw_error("log_normalizers: {} outputs for {} rows", out.size(), x.rows);
  m.use_device();
  if (x.rows == 0) return;
  auto* d = static_cast<double*>(m.grow(m.lognorm_buf, out.size() * sizeof(double), "log normalizers"));
  m.graphs.mix(20, x.data, x.rows, x.cols, d);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_log_normalizers(x.data, x.rows, x.cols, d, m.stream), "log normalizer kernel");
  });
  m.launch_step();  // the step ends here, as at read()
  check(cudaMemcpyAsync(out.data(), d, out.size() * sizeof(double), cudaMemcpyDeviceToHost, m.stream),
        "cudaMemcpyAsync (log normalizers)");
  m.wait_for_stream("cudaStreamSynchronize (log normalizers)");
}

void CudaBackend::pick_values(const Tensor& x, std::span<const int32_t> cols, std::span<float> out) {
  Impl& m = *impl_;
  m.touch({x});
  check_pick_args(x.rows, x.cols, cols, out.size());
  m.use_device();
  if (x.rows == 0) return;
  const size_t n = out.size();
  auto* d_picks = static_cast<int32_t*>(m.grow(m.pick_buf, n * (sizeof(int32_t) + sizeof(float)), "picked logits"));
  float* d_out = reinterpret_cast<float*>(d_picks + n);
  // The columns come from this step's own reductions: copied in now (an early graph read old ones).
  check(cudaMemcpyAsync(d_picks, cols.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice, m.stream), "cudaMemcpyAsync (picks)");
  m.graphs.early_input_changed();
  m.graphs.mix(21, x.data, x.rows, x.cols, d_picks, d_out);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_pick_values(x.data, x.rows, x.cols, d_picks, d_out, m.stream), "pick values kernel");
  });
  m.launch_step();  // the step ends here, as at read()
  check(cudaMemcpyAsync(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost, m.stream), "cudaMemcpyAsync (picked)");
  m.wait_for_stream("cudaStreamSynchronize (picked logits)");
}

void CudaBackend::edit_logits(Tensor x) {
  using E = cuda::EditArg;
  static_assert(sizeof(LogitEdit) == sizeof(E) && offsetof(LogitEdit, token) == offsetof(E, token) &&
                    offsetof(LogitEdit, ops) == offsetof(E, ops) && offsetof(LogitEdit, bias) == offsetof(E, bias) &&
                    offsetof(LogitEdit, repetition) == offsetof(E, repetition) &&
                    offsetof(LogitEdit, subtract) == offsetof(E, subtract) && uint32_t{LogitEdit::kBias} == uint32_t{E::kBias} &&
                    uint32_t{LogitEdit::kSuppress} == uint32_t{E::kSuppress} &&
                    uint32_t{LogitEdit::kRepetition} == uint32_t{E::kRepetition} &&
                    uint32_t{LogitEdit::kSubtract} == uint32_t{E::kSubtract},
                "the edits are copied to the device as they are");
  Impl& m = *impl_;
  m.touch({x});
  m.forget_q8();
  check_logit_edits(m.step_edits, m.step_edit_rows, static_cast<size_t>(x.rows), x.cols);
  if (m.step_edit_rows.empty() || x.rows == 0) return;
  m.use_device();
  m.graphs.mix(19, x.data, x.rows, x.cols, m.d_step, m.d_edit_rows);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_edit_logits(x.data, x.rows, x.cols, m.d_step, m.d_edit_rows, m.stream), "logit edit kernel");
  });
}

void CudaBackend::write(Tensor t, const float* host) {
  Impl& m = *impl_;
  m.touch({}, {t});
  m.forget_q8();
  m.use_device();
  m.graphs.flush();
  check(cudaMemcpyAsync(t.data, host, t.elements() * sizeof(float), cudaMemcpyHostToDevice, m.stream), "cudaMemcpyAsync (write)");
  check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize (write)");
}

void CudaBackend::fill(Tensor t, float value) {
  impl_->touch({}, {t});
  impl_->forget_q8();
  impl_->graphs.flush();
  impl_->launched(cuda::launch_fill(t.data, static_cast<int64_t>(t.elements()), value, impl_->stream), "fill");
}

std::vector<float> CudaBackend::read_kv_block(int32_t block) {
  Impl& m = *impl_;
  if (block < 0 || uint32_t(block) >= m.num_blocks) throw_error("CUDA backend: KV block {} outside the pool", block);
  m.graphs.flush();
  const size_t n = static_cast<size_t>(m.block_elems), bytes = n * m.kv_elem;
  std::vector<uint8_t> raw(bytes);
  check(cudaMemcpyAsync(raw.data(), m.pool + block * bytes, bytes, cudaMemcpyDeviceToHost, m.stream),
        "cudaMemcpyAsync (KV block)");
  check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize");
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (m.kv_type == TensorType::F32) {
      std::memcpy(&out[i], raw.data() + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, raw.data() + 2 * i, 2);
      out[i] = m.kv_type == TensorType::F16 ? __half2float(__half(__half_raw{h}))
                                            : std::bit_cast<float>(uint32_t(h) << 16);  // BF16: the top half of an f32
    }
  }
  return out;
}

void CudaBackend::synchronize() {
  impl_->graphs.flush();
  check(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize");
}

// ---- step ---------------------------------------------------------------------------------------

void CudaBackend::begin_step(const StepInfo& step) {
  Impl& m = *impl_;
  m.forget_q8();
  m.use_device();
  m.graphs.flush();  // a step that ended without read()
  ++m.steps;
  m.step_at = std::chrono::steady_clock::now();
  const size_t n = step.tokens.size();
  if (step.positions.size() != n) throw_error("CUDA backend: {} positions for {} tokens", step.positions.size(), n);
  if (n > size_t(kMaxGridY)) throw_error("CUDA backend: a step of {} tokens (at most {})", n, kMaxGridY);
  std::vector<int32_t> row_ctx(n, 0), row_table(n, 0);
  m.max_ctx = 0;
  for (const StepSequence& s : step.sequences) {
    if (size_t(s.q_begin) + s.q_count > n) throw_error("CUDA backend: sequence rows [{}, +{}) outside the step", s.q_begin, s.q_count);
    if (size_t(s.table_begin) + s.table_size > step.block_tables.size()) throw_error("CUDA backend: block table outside the step");
    const uint64_t ctx = uint64_t(s.n_past) + s.q_count;
    if (m.layout.block_size != 0 && ctx > uint64_t(s.table_size) * m.layout.block_size) {
      throw_error("CUDA backend: a context of {} tokens needs more than its {} blocks", ctx, s.table_size);
    }
    for (uint32_t t = 0; t < s.q_count; ++t) {
      row_ctx[s.q_begin + t] = static_cast<int32_t>(s.n_past + t + 1);
      row_table[s.q_begin + t] = static_cast<int32_t>(s.table_begin);
    }
    m.max_ctx = std::max<int32_t>(m.max_ctx, static_cast<int32_t>(ctx));
  }
  for (int32_t b : step.block_tables) {
    if (b < 0 || uint32_t(b) >= m.num_blocks) throw_error("CUDA backend: block {} outside the pool of {}", b, m.num_blocks);
  }
  for (int64_t slot : step.slot_mapping) {
    if (slot < 0 || uint64_t(slot) >= uint64_t(m.num_blocks) * m.layout.block_size) {
      throw_error("CUDA backend: KV slot {} outside the pool", slot);
    }
  }
  if (step.draws.size() > n) throw_error("CUDA backend: {} draws for a step of {} tokens", step.draws.size(), n);
  if (!step.draws.empty()) check_draw_args(int64_t(step.draws.size()), step.draws, step.draws.size());
  // One upload: [tokens][positions][row_ctx][row_table] as int32, slots as int64, n draws (those
  // given, then harmless ones), then the block tables last, so that every pointer below depends only
  // on the row count (stable graph arguments; an early graph of another step of the class reads
  // this step's inputs where it expects them).
  const size_t n32 = 4 * n;
  const size_t off64 = round_up(n32 * sizeof(int32_t), 8);
  const size_t off_draws = round_up(off64 + step.slot_mapping.size() * sizeof(int64_t), 16);
  // The edits' row offsets (n + 2 entries: the edits' byte offset, then n + 1 row offsets) also sit
  // at a place set by the row count; the edits themselves go last.
  if (!step.edit_rows.empty() && step.edit_rows.size() > n + 1) {
    throw_error("CUDA backend: {} logit edit row offsets for a step of {} tokens", step.edit_rows.size(), n);
  }
  const size_t off_edit_rows = off_draws + n * sizeof(RowDraw);
  size_t off_tables = round_up(off_edit_rows + (n + 2) * sizeof(uint32_t), 8);
  // Tensor-core attention tiles and the split path's rows come before the tables. By default chunks of
  // attn_tc_rows and more take the tensor-core path (steps that have them are never graphed). The
  // deterministic mode puts every row on one path, since whether a chunk reaches attn_tc_rows depends
  // on how the step was batched: the split path, or with det_attn_tc the tensor-core one (a tile a
  // sequence chunk, so a decode step's plan depends only on its row count: stable for its graph).
  const int tc_rows = m.deterministic ? (m.det_attn_tc ? 1 : 0) : m.attn_tc_rows;
  const std::vector<int32_t> attn = attention_plan(step, m.kv_type, tc_rows, n);
  const size_t off_attn = off_tables;
  off_tables = round_up(off_attn + attn.size() * sizeof(int32_t), 8);
  const size_t off_edits = round_up(off_tables + step.block_tables.size() * sizeof(int32_t), 8);
  const size_t bytes = off_edits + step.edits.size() * sizeof(LogitEdit);
  if (bytes > UINT32_MAX) throw_error("CUDA backend: {} bytes of step inputs", bytes);
  auto* h = static_cast<uint8_t*>(m.step_staging.acquire(bytes + 8));
  auto* h32 = reinterpret_cast<int32_t*>(h);
  std::copy(step.tokens.begin(), step.tokens.end(), h32);
  std::copy(step.positions.begin(), step.positions.end(), h32 + n);
  std::copy(row_ctx.begin(), row_ctx.end(), h32 + 2 * n);
  std::copy(row_table.begin(), row_table.end(), h32 + 3 * n);
  std::copy(step.slot_mapping.begin(), step.slot_mapping.end(), reinterpret_cast<int64_t*>(h + off64));
  std::fill_n(reinterpret_cast<RowDraw*>(h + off_draws), n, RowDraw{});
  std::copy(step.draws.begin(), step.draws.end(), reinterpret_cast<RowDraw*>(h + off_draws));
  std::copy(step.block_tables.begin(), step.block_tables.end(), reinterpret_cast<int32_t*>(h + off_tables));
  std::copy(attn.begin(), attn.end(), reinterpret_cast<int32_t*>(h + off_attn));
  auto* h_edit_rows = reinterpret_cast<uint32_t*>(h + off_edit_rows);
  h_edit_rows[0] = static_cast<uint32_t>(off_edits);
  std::fill_n(h_edit_rows + 1, n + 1, 0u);
  std::copy(step.edit_rows.begin(), step.edit_rows.end(), h_edit_rows + 1);
  std::copy(step.edits.begin(), step.edits.end(), reinterpret_cast<LogitEdit*>(h + off_edits));
  // Grown in powers of two (at least 64 KiB): a new address means new graphs.
  auto* d = static_cast<uint8_t*>(m.step_buf.ensure(std::bit_ceil(std::max<size_t>(bytes + 8, size_t(64) << 10)), "step metadata"));
  m.step_staging.upload(d, bytes, m.stream);
  auto* d32 = reinterpret_cast<int32_t*>(d);
  m.n_tokens = static_cast<int64_t>(n);
  m.d_tokens = d32;
  m.d_positions = d32 + n;
  m.d_row_ctx = d32 + 2 * n;
  m.d_row_table = d32 + 3 * n;
  m.d_slots = reinterpret_cast<int64_t*>(d + off64);
  m.d_tables = reinterpret_cast<int32_t*>(d + off_tables);
  m.n_slots = static_cast<int64_t>(step.slot_mapping.size());
  m.d_draws = step.draws.empty() ? nullptr : reinterpret_cast<const cuda::DrawArg*>(d + off_draws);
  m.step_draws.assign(step.draws.begin(), step.draws.end());
  m.d_step = d;
  m.d_edit_rows = reinterpret_cast<const uint32_t*>(d + off_edit_rows);
  m.step_edits.assign(step.edits.begin(), step.edits.end());
  m.step_edit_rows.assign(step.edit_rows.begin(), step.edit_rows.end());
  m.n_attn_tiles = attn.empty() ? 0 : attn[0];
  m.n_split_rows = attn.empty() ? 0 : attn[1];
  m.max_tile_rows = 0;
  for (int32_t t = 0; t < m.n_attn_tiles; ++t) m.max_tile_rows = std::max(m.max_tile_rows, attn[2 + 4 * size_t(t) + 1]);
  m.d_attn_tiles = attn.empty() ? nullptr : reinterpret_cast<const cuda::AttnTile*>(d + off_attn + 2 * sizeof(int32_t));
  m.d_split_rows = attn.empty() ? nullptr : reinterpret_cast<const int32_t*>(d + off_attn) + 2 + 4 * m.n_attn_tiles;
  m.attn_splits = (m.max_ctx + cuda::kAttnSplit - 1) / cuda::kAttnSplit;
  // Decode-only steps (one new token per sequence) go through CUDA graphs, one class per row count
  // and padded split count; prefill and mixed steps stay eager.
  bool decode = n > 0 && n <= m.graph_max_rows && step.sequences.size() == n && step.slot_mapping.size() == n;
  for (const StepSequence& s : step.sequences) decode = decode && s.q_count == 1;
  if (decode && m.graphs.enabled) {
    m.attn_splits = std::max(n == 1 ? kMinGraphSplitsOneRow : kMinGraphSplits,
                             static_cast<int32_t>(std::bit_ceil(static_cast<uint32_t>(m.attn_splits))));
    m.graphs.begin((uint64_t(n) << 32) | uint64_t(m.attn_splits));
    // The step's inputs are on the stream: the class's last graph can start while the ops are
    // recorded (cuda_graphs.h; finish() checks the guess).
    if (m.early_launch) m.graphs.launch_early(m.stream);
  }
  m.begin_seconds += Impl::since(m.step_at);
  m.record_at = std::chrono::steady_clock::now();
}

// ---- ops ----------------------------------------------------------------------------------------

void CudaBackend::embed(const Weight& table, Tensor out) {
  Impl& m = *impl_;
  m.touch({}, {out});
  m.forget_q8();
  if (out.rows != m.n_tokens || out.cols != table.cols) {
    throw_error("embed: output {} x {}, expected {} x {}", out.rows, out.cols, m.n_tokens, table.cols);
  }
  const TensorType type = table.type;
  const void* data = table.data;
  const int64_t rows = table.rows, cols = table.cols, n = m.n_tokens;
  const int32_t* tokens = m.d_tokens;
  m.graphs.mix(1, type, data, rows, cols, tokens, n, out.data, out.cols);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_embed(type, data, rows, cols, tokens, n, out.data, out.cols, m.stream), "embed kernel");
  });
}

void CudaBackend::rms_norm(const Tensor& x, const Weight& gain, float eps, Tensor out) {
  if (gain.type != TensorType::F32 || gain.cols <= 0 || x.cols % gain.cols != 0 || out.cols != x.cols || out.rows != x.rows) {
    throw_error("rms_norm {}: gain of {} for rows of {}", gain.name, gain.cols, x.cols);
  }
  Impl& m = *impl_;
  m.touch({x}, {out});
  const float* g = static_cast<const float*>(gain.data);
  const int64_t group = gain.cols;
  if (group == x.cols && cuda::fast_norm_supports(x.cols)) {  // whole rows: the fused kernel, no delta
    void* q8 = m.norm_q8(out);
    bool f16 = false;
    void* xb = m.norm_copy16(out, f16);
    m.graphs.mix(13, x.data, g, x.rows, x.cols, eps, out.data, q8, xb, f16);
    m.graphs.run([=, &m] {
      m.launched(cuda::launch_add_rms_norm(x.data, nullptr, g, x.rows, x.cols, eps, out.data, q8, m.stream, xb, f16), "rms_norm kernel");
    });
    return;
  }
  m.forget_q8();
  m.graphs.mix(2, x.data, g, x.rows, x.cols, group, eps, out.data);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_rms_norm(x.data, g, x.rows, x.cols, group, eps, out.data, m.stream), "rms_norm kernel");
  });
}

void CudaBackend::matmul(const Weight& w, const Tensor& x, Tensor out, const Weight* bias) {
  Impl& m = *impl_;
  if (x.cols != w.cols || out.cols != w.rows || out.rows != x.rows) {
    throw_error("matmul {}: {} x {} input, {} x {} output for a {} x {} weight", w.name, x.rows, x.cols, out.rows, out.cols,
                w.rows, w.cols);
  }
  if (bias != nullptr && (bias->type != TensorType::F32 || bias->cols != w.rows)) throw_error("matmul {}: bad bias", w.name);
  const float* b = bias != nullptr ? static_cast<const float*>(bias->data) : nullptr;
  const int64_t M = x.rows, N = w.rows, K = w.cols;
  if (M == 0) return;
  const bool plain = w.type == TensorType::F32 || w.type == TensorType::F16 || w.type == TensorType::BF16;
  const TensorType type = w.type;
  const void* wd = w.data;
  // One row: gemv_kernels.h, int8 x for Q8_0/Q4_K/Q6_K, f32 x otherwise (the deterministic mode's
  // F16/BF16: det_mma16.h). The deterministic mode's many-row kernels below reproduce these
  // kernels' bits for every row.
  if (M == 1) {
    cuda::GemvSegs segs;
    segs.add(wd, N, out.data, b);
    m.gemv_batch1(type, segs, x);
    return;
  }
  m.wrote(out);
  // 2..kMaxI8Rows rows of Q8_0/Q4_K/Q6_K (round 8): the int8 GEMV that reads each weight row once
  // for all token rows; x quantized per row as at batch 1 (once for Q, K and V). Deterministic mode:
  // every row count, in groups of kMaxI8Rows (round 9). From 4 rows up to kMmaRowsMax (32, round
  // 51) outside that mode: the int8 tensor-core kernel (gemv_mma.h), x quantized in its tiles.
  if (m.int8_rows_for(type, M, K)) {
    m.touch({x});
    const float* xd = x.data;
    const bool mma = m.mma_rows_for(type, M, K);
    bool quantize = false;
    void* q8 = m.q8_rows_input(x, mma, quantize);
    float* od = out.data;
    const int64_t ldo = out.cols;
    const size_t wsf = mma ? 0 : cuda::gemv_i8_rows_ws_floats(type, N, K, int(M), m.sms);
    float* ws = wsf == 0 ? nullptr : static_cast<float*>(m.grow(m.rows_ws, wsf * sizeof(float), "matmul partial sums (rows)"));
    const int sms = m.sms;
    m.graphs.mix(45, type, wd, N, K, M, xd, q8, quantize, od, ldo, b, ws, mma);
    m.graphs.run([=, &m] {
      if (quantize) m.launched(m.quantize_rows(mma, xd, M, K, q8), mma ? "quantize_mma_x kernel" : "quantize_q8_rows kernel");
      if (mma) {
        m.launched(cuda::launch_gemv_mma(type, wd, N, K, q8, int(M), od, ldo, b, sms, m.stream), "int8 mma rows kernel");
        return;
      }
      m.launched(cuda::launch_gemv_i8_rows(type, wd, N, K, q8, int(M), od, ldo, b, ws, sms, m.stream), "int8 gemv rows kernel");
    });
    if (od < xd + M * K && xd < od + M * ldo) m.q8r_of = nullptr;  // the output overwrote x
    return;
  }
  // dq_mma (dq_mma_for: forced, or by default the shapes where it wins): bf16 tensor cores, the
  // weights dequantized once a block, x in bf16 (the copy a norm left, or converted once for Q, K and V).
  if (m.dq_mma_for(type, M, K, N, wd)) {
    const cuda::DqMmaPlan plan = m.dq_plan(type, M, K, N);
    float* ws;
    int32_t* cnt;
    m.dq_scratch(plan, ws, cnt);
    const void* xb = m.bf16_input(x);
    float* od = out.data;
    const int64_t ldo = out.cols;
    m.graphs.mix(47, type, wd, N, K, M, xb, ws, cnt, od, ldo, b, plan.splits, plan.nt, plan.rs);
    m.graphs.run([=, &m] {
      m.launched(plan.rs >= 3 ? cuda::launch_dq_tma(type, wd, N, K, xb, M, plan, ws, cnt, od, ldo, b, m.stream)
                              : cuda::launch_dq_mma(type, wd, N, K, xb, M, plan, ws, cnt, od, ldo, b, m.stream),
                 plan.rs >= 3 ? "dq_tma kernel" : "dq_mma kernel");
    });
    return;
  }
  // 2..mmq_max_rows rows of Q8_0/Q4_0/Q5_0/Q4_K/Q5_K/Q6_K: int8 tensor-core GEMM on the quantized
  // weights (mmq.h), no BF16 dequantization; other types, k not a multiple of 256 and prefill-sized
  // row counts take the GEMV / cuBLAS paths below.
  if (M >= 2 && M <= m.mmq_max_rows && m.mmq && !m.deterministic && cuda::mmq_supports(type, K)) {
    m.touch({x});
    void* scratch = m.grow(m.x_q8, cuda::mmq_scratch_bytes(M, K), "matmul activations (int8)");
    m.graphs.mix(40, type, wd, N, K, M, x.data, scratch, out.data, out.cols, b);
    m.graphs.run([=, &m] {
      m.launched(cuda::launch_mmq(type, wd, N, K, x.data, M, scratch, out.data, out.cols, b, m.stream), "mmq kernel");
    });
    return;
  }
  // Deterministic mode, F16/BF16 (round 23): tensor cores, the batch-1 launch's chains (det_mma16.h).
  if (m.det16_for(type, K)) {
    float* od = out.data;
    const int64_t ldo = out.cols;
    if (M < cuda::det16_gemm_min_rows()) {
      m.touch({x});
      cuda::GemvSegs segs;
      segs.add(wd, N, od, b);
      const float* xd = x.data;
      m.graphs.mix(52, type, wd, N, K, M, xd, od, ldo, b);
      m.graphs.run([=, &m] {
        m.launched(cuda::launch_det16_gemv(type, segs, K, xd, K, int(M), ldo, m.stream), "det16 gemv kernel");
      });
      return;
    }
    m.touch({x});
    const size_t wsf = cuda::det16_gemm_ws_floats(N, K, int(M));
    float* ws = wsf == 0 ? nullptr : static_cast<float*>(m.grow(m.rows_ws, wsf * sizeof(float), "matmul partial sums (det16)"));
    void* xp = m.grow(m.det16_x, cuda::det16_gemm_x_bytes(K, int(M)), "matmul activations (det16 pairs)");
    const float* xd = x.data;
    m.graphs.mix(53, type, wd, N, K, M, xd, od, ldo, b, xp, ws);
    m.graphs.run([=, &m] {
      m.launched(cuda::launch_det16_gemm(type, wd, N, K, xd, K, int(M), od, ldo, b, xp, ws, m.stream), "det16 gemm kernel");
    });
    return;
  }
  // Deterministic mode, other types (round 9): every row through launch_gemv1's arithmetic, the
  // kernel a single row takes, so a row's result does not depend on the batch.
  if (m.deterministic) {
    m.touch({x});
    m.graphs.mix(46, type, wd, N, K, M, x.data, out.data, out.cols, b);
    m.graphs.run([=, &m] {
      m.launched(cuda::launch_gemv1_rows(type, wd, N, K, x.data, int(M), out.data, out.cols, b, m.stream), "gemv rows kernel");
    });
    return;
  }
  if (M <= (plain ? m.gemv_max_rows_plain : m.gemv_max_rows_quant)) {
    m.touch({x});
    m.graphs.mix(4, type, wd, N, K, M, x.data, x.cols, out.data, out.cols, b);
    m.graphs.run([=, &m] {
      for (int64_t r = 0; r < M; r += cuda::kMaxGemvRows) {
        const int nb = static_cast<int>(std::min<int64_t>(cuda::kMaxGemvRows, M - r));
        m.launched(cuda::launch_gemv(type, wd, N, K, x.data + r * x.cols, x.cols, nb, out.data + r * out.cols, out.cols, b,
                                     m.stream),
                   "gemv kernel");
      }
    });
    return;
  }
  // cuBLAS; workspaces are sized here, before any op is stored.
  if (type == TensorType::F32) {
    m.touch({x});
    m.graphs.mix(5, type, wd, N, K, M, x.data, x.cols, out.data, out.cols, b);
    m.graphs.run([=, &m] {
      const float one = 1.0f, zero = 0.0f;
      check(cublasSgemm(m.blas, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &one, static_cast<const float*>(wd), int(K),
                        x.data, int(x.cols), &zero, out.data, int(out.cols)),
            "cublasSgemm");
      if (b != nullptr) m.launched(cuda::launch_add_bias(out.data, M, N, out.cols, b, m.stream), "add_bias kernel");
    });
    return;
  }
  if (type == TensorType::F16) {  // f16 x times the F16 weights as stored, f32 out
    const void* xh = m.f16_input(x);
    float* od = out.data;
    const int64_t ldo = out.cols;
    m.graphs.mix(49, type, wd, N, K, M, xh, od, ldo, b);
    m.graphs.run([=, &m] {
      m.gemm_f16(wd, N, K, xh, M, od, CUDA_R_32F, ldo);
      if (b != nullptr) m.launched(cuda::launch_add_bias(od, M, N, ldo, b, m.stream), "add_bias kernel");
    });
    if (od < x.data + M * x.cols && x.data < od + M * ldo) m.f16_of = nullptr;  // out overwrote x: the copy is stale
    return;
  }
  // BF16 x (the copy a producer left, or converted now) times BF16 (or dequantized, or a dense copy's)
  // weights, f32 out.
  const Weight v = m.dense_view(w);
  const TensorType vt = v.type;
  const void* vd = v.data;
  const int64_t tile = m.weight_tile(vt, N, K);
  void* wb = m.weight_tile_buffer(vt, N, K, tile);
  const void* xb = m.bf16_input(x);
  m.graphs.mix(64, vt, vd, N, K, M, xb, out.data, out.cols, b, tile, wb);
  m.graphs.run([=, &m] {
    m.gemm_bf16(vt, vd, N, K, xb, M, out.data, CUDA_R_32F, out.cols, tile, wb);
    if (b != nullptr) m.launched(cuda::launch_add_bias(out.data, M, N, out.cols, b, m.stream), "add_bias kernel");
  });
}

void CudaBackend::rope(Tensor x, uint32_t head_dim, const RopeConfig& rope) {
  Impl& m = *impl_;
  m.touch({x}, {x});
  m.forget_q8();
  if (head_dim == 0 || x.cols % head_dim != 0 || rope.dims > head_dim || rope.dims % 2 != 0 || x.rows != m.n_tokens) {
    throw_error("rope: {} columns, head_dim {}, {} rotated dims, {} rows for {} tokens", x.cols, head_dim, rope.dims, x.rows,
                m.n_tokens);
  }
  const cuda::RopeParams p = rope_params(rope);
  const int32_t* positions = m.d_positions;
  m.graphs.mix(6, x.data, x.rows, x.cols, head_dim, positions);
  m.graphs.mix_bytes(&p, sizeof p);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_rope(x.data, x.rows, x.cols, static_cast<int>(head_dim), positions, p, m.stream), "rope kernel");
  });
}

void CudaBackend::store_kv(uint32_t layer, const Tensor& k, const Tensor& v) {
  Impl& m = *impl_;
  m.touch({k, v});
  m.forget_q8();
  if (layer >= m.layout.layers.size()) throw_error("store_kv: layer {} of {}", layer, m.layout.layers.size());
  const auto& s = m.layout.layers[layer];
  const int64_t row = int64_t(s.n_kv_heads) * s.head_dim_k;
  if (k.cols != row || v.cols != row || k.rows != m.n_slots || v.rows != m.n_slots) {
    throw_error("store_kv: K {} x {}, V {} x {} for {} slots of {}", k.rows, k.cols, v.rows, v.cols, m.n_slots, row);
  }
  const cuda::KvPoolView view{m.pool, m.block_elems, m.k_off[layer], m.v_off[layer], int(m.layout.block_size),
                              int(s.n_kv_heads), int(s.head_dim_k), m.kv_type, int64_t(m.num_blocks)};
  const int64_t* slots = m.d_slots;
  const int64_t n = m.n_slots;
  m.graphs.mix(7, view.pool, view.block_elems, int(view.type), view.k_off, view.v_off, view.block_size, view.kv_heads, view.head_dim, k.data,
               v.data, slots, n);
  m.graphs.run([=, &m] { m.launched(cuda::launch_store_kv(view, k.data, v.data, slots, n, m.stream), "store_kv kernel"); });
}

// The split and tensor-core paths' launch of `layer`'s attention of q into out (shapes checked,
// workspaces and counters grown), shared by attention and rope_attention. False: no context.
bool CudaBackend::Impl::attn_launch(uint32_t layer, const Tensor& q, const AttentionShape& shape, const Tensor& out, AttnLaunch& a) {
  if (layer >= layout.layers.size()) throw_error("attention: layer {} of {}", layer, layout.layers.size());
  const auto& s = layout.layers[layer];
  if (shape.kv_heads != s.n_kv_heads || shape.head_dim != s.head_dim_k || shape.kv_heads == 0 ||
      shape.heads % shape.kv_heads != 0) {
    throw_error("attention: {} heads / {} KV heads of {} for a layer of {} KV heads of {}", shape.heads, shape.kv_heads,
                shape.head_dim, s.n_kv_heads, s.head_dim_k);
  }
  if (shape.heads / shape.kv_heads > uint32_t(cuda::kMaxAttnGroup) || shape.head_dim > uint32_t(cuda::kMaxAttnHeadDim)) {
    throw_error("attention: {} query heads per KV head of {} dims (the kernel takes at most {} of {})",
                shape.heads / shape.kv_heads, shape.head_dim, cuda::kMaxAttnGroup, cuda::kMaxAttnHeadDim);
  }
  const int64_t width = int64_t(shape.heads) * shape.head_dim;
  if (q.cols != width || out.cols != width || q.rows != n_tokens || out.rows != n_tokens) {
    throw_error("attention: q {} x {}, out {} x {}, expected {} x {}", q.rows, q.cols, out.rows, out.cols, n_tokens, width);
  }
  if (max_ctx == 0) return false;
  cuda::AttnParams& p = a.p;
  p = {};
  p.q = q.data;
  p.ldq = q.cols;
  p.out = out.data;
  p.ldo = out.cols;
  p.kv = {pool, block_elems, k_off[layer], v_off[layer], int(layout.block_size), int(s.n_kv_heads), int(s.head_dim_k), kv_type, int64_t(num_blocks)};
  p.row_ctx = d_row_ctx;
  p.row_table = d_row_table;
  p.tables = d_tables;
  p.heads = int(shape.heads);
  p.scale = shape.scale;
  p.max_splits = attn_splits;
  p.small_rows = deterministic ? 0 : kAttnSmallRows;
  p.deterministic = deterministic ? 1 : 0;
  // Long chunks on tensor cores when this layer's shape allows; the other rows on the split path.
  const bool tc = n_attn_tiles > 0 && cuda::attn_tc_supported(p.kv);
  a.tiles = tc ? d_attn_tiles : nullptr;
  a.n_tiles = tc ? n_attn_tiles : 0;
  p.split_rows = tc ? d_split_rows : nullptr;
  // Deterministic mode (round 24): every row's spans of det_span_tiles tiles on the tensor-core
  // kernel, merged per row; the span slots follow the step's (graph-padded) split count.
  a.det_spans = tc && deterministic;
  if (a.det_spans) {
    p.span_tiles = det_span_tiles;
    const int64_t span = int64_t(p.span_tiles) * cuda::kAttnTileRows;
    p.spans = int((int64_t(attn_splits) * cuda::kAttnSplit + span - 1) / span);
    p.tc_sub = int((int64_t(max_tile_rows) * (shape.heads / shape.kv_heads) + cuda::kAttnTileRows - 1) / cuda::kAttnTileRows);
    const int64_t slots = q.rows * int64_t(shape.heads) * p.spans;
    auto* ws = static_cast<float*>(grow(attn_ws, size_t(slots * (shape.head_dim + 2)) * sizeof(float), "attention workspace"));
    p.part_acc = ws;
    p.part_ml = ws + slots * shape.head_dim;
  }
  a.rows = tc ? n_split_rows : q.rows;
  // The span partials live in attn_ws, which the split path below would reuse: the mode's plan puts
  // every row on tiles (attention_plan with 1 row), so no row is left to it.
  if (a.det_spans && a.rows > 0) throw_error("attention: {} deterministic rows outside the tensor-core tiles", a.rows);
  const int64_t per_row = int64_t(shape.heads) * p.max_splits * (shape.head_dim + 2);
  const int64_t rows_per_launch = std::clamp<int64_t>(kAttnWorkspaceFloats / per_row, 1, kMaxGridY);
  a.launch_rows = std::min(rows_per_launch, a.rows);
  if (a.launch_rows > 0) {
    auto* ws = static_cast<float*>(grow(attn_ws, size_t(a.launch_rows * per_row) * sizeof(float), "attention workspace"));
    p.part_acc = ws;
    p.part_ml = ws + a.launch_rows * int64_t(shape.heads) * p.max_splits * shape.head_dim;
    // The fused merge's arrival counters: zeroed once when (re)allocated; kernels leave them zero.
    const size_t cnt_bytes = size_t(cuda::attn_counters(p.heads, p.kv.kv_heads, a.launch_rows)) * sizeof(int32_t);
    const void* old_cnt = attn_cnt.get();
    const size_t old_size = attn_cnt.size();
    p.counters = static_cast<int32_t*>(grow(attn_cnt, cnt_bytes, "attention counters"));
    if (p.counters != old_cnt || attn_cnt.size() != old_size) {
      check(cudaMemsetAsync(p.counters, 0, attn_cnt.size(), stream), "attention counters");
    }
  }
  // One decode row: the int8 copy of out for the output projection's int8 GEMV (round 8), written by
  // the kernel that merges the row instead of a quantize kernel in that matmul (q8_of, as the norms do).
  // A step of one token row writes only that row's position: older K/V may be read before the wait.
  p.kv_before_wait = q.rows == 1 && a.n_tiles == 0 && n_tokens == 1 ? 1 : 0;
  a.q8_copy = q.rows == 1 && a.n_tiles == 0 && int8_gemv && width % 32 == 0;
  if (a.q8_copy) {
    p.out_q8 = static_cast<int8_t*>(grow(x_q8_norm, cuda::q8_bytes(width), "norm activations (int8)"));
    p.q8_xs_off = (width + 15) / 16 * 16;
  }
  return true;
}

void CudaBackend::attention(uint32_t layer, const Tensor& q, const AttentionShape& shape, Tensor out) {
  Impl& m = *impl_;
  m.touch({q}, {out});
  m.forget_q8();
  Impl::AttnLaunch a;
  if (!m.attn_launch(layer, q, shape, out, a)) return;
  // Round 53: a decode step of 2-16 rows in one launch writes the int8 rows the output projection's
  // int8 rows kernels read, in the layout the step's last fused launch read (norm_q8_rows), so
  // that matmul quantizes nothing.
  if (m.attn_q8_rows && a.rows >= 2 && a.rows == q.rows && a.launch_rows == a.rows && a.n_tiles == 0 && !a.det_spans && !a.q8_copy &&
      shape.head_dim % 32 == 0) {
    const cuda::NormRowsQ8 rq = m.norm_q8_rows(out, false);
    a.p.q8_rows = rq.base, a.p.q8_rows_stride = rq.stride, a.p.q8_rows_nt = rq.nt;
    if (rq.base != nullptr) ++m.rows_fused_stats.attn_copies;
  }
  const cuda::AttnParams p = a.p;
  const cuda::AttnTile* tiles = a.tiles;
  const int n_tiles = a.n_tiles;
  const bool det_spans = a.det_spans;
  const int64_t rows = a.rows, launch_rows = a.launch_rows;
  m.graphs.mix(8, p.q, p.ldq, p.out, p.ldo, p.kv.pool, p.kv.block_elems, int(p.kv.type), p.kv.k_off, p.kv.v_off, p.kv.block_size,
               p.kv.kv_heads, p.kv.head_dim, p.row_ctx, p.row_table, p.tables, p.heads, p.scale, p.max_splits, p.part_acc,
               p.part_ml, p.counters, rows, launch_rows, p.split_rows, tiles, n_tiles, p.small_rows, p.out_q8, p.q8_xs_off,
               p.kv_before_wait, p.deterministic, p.spans, p.tc_sub, p.span_tiles, p.q8_rows, p.q8_rows_stride, p.q8_rows_nt);
  m.graphs.run([=, &m] {
    if (rows == 1 && m.skip(4)) return;
    if (n_tiles > 0) m.launched(cuda::launch_attention_tc(p, tiles, n_tiles, m.stream), "tensor-core attention kernel");
    if (det_spans) m.launched(cuda::launch_attention_span_merge(p, q.rows, m.stream), "attention span merge kernel");
    for (int64_t r0 = 0; r0 < rows; r0 += launch_rows) {
      m.launched(cuda::launch_attention(p, r0, std::min(launch_rows, rows - r0), m.stream), "attention kernel");
    }
  });
  if (a.q8_copy) {
    m.q8_of = out.data;
    m.q8_cols = q.cols;
  }
}

// A step of one token row (round 29): RoPE, the K/V store and the attention in one kernel
// (attn_rope_row.h); otherwise, or in the deterministic mode and under ablation, the two ops.
void CudaBackend::rope_attention(uint32_t layer, Tensor q, Tensor k, const Tensor& v, uint32_t head_dim, const RopeConfig& rc,
                                 const AttentionShape& shape, Tensor out) {
  Impl& m = *impl_;
  // Round 37: whether the Q/K/V launch already did this layer's RoPE and K/V store (taken by
  // rope_attention_rows; every other path does them again from the f32 rows, which are as before).
  const Impl::Roped& r = m.roped;
  m.roped_take = r.valid && r.layer == layer && r.q == q.data && r.k == k.data && r.v == v.data && r.rows == q.rows;
  m.roped.valid = false;
  const auto unfused = [&] {
    rope_store_kv(layer, q, k, v, head_dim, rc);
    attention(layer, q, shape, out);
  };
  if (q.rows >= 2 && m.rope_rows && m.ablate == 0 && !m.deterministic && m.n_attn_tiles > 0 &&
      m.rope_store_fits(layer, q, k, v, head_dim, rc) && shape.head_dim == head_dim) {
    if (rope_attention_rows(layer, q, k, v, head_dim, rc, shape, out)) return;
    return unfused();
  }
  if ((m.ablate & ~16u) != 0 || m.deterministic || q.rows != 1 || m.n_tokens != 1 || m.n_slots != 1 || m.n_attn_tiles > 0 ||
      !m.rope_store_fits(layer, q, k, v, head_dim, rc) || shape.head_dim != head_dim) {
    return unfused();
  }
  m.touch({q, k, v}, {out});
  m.forget_q8();
  Impl::AttnLaunch a;
  cuda::RopeRowInputs in;
  in.rope = rope_params(rc);
  if (!m.attn_launch(layer, q, shape, out, a) || a.rows != 1 || a.launch_rows != 1 || a.n_tiles != 0 ||
      !cuda::attn_rope_row_takes(a.p, in.rope)) {
    return unfused();
  }
  ++m.rope_row_calls;
  in.k = k.data;
  in.v = v.data;
  in.position = m.d_positions;
  in.slot = m.d_slots;
  const cuda::AttnParams p = a.p;
  m.graphs.mix(55, p.q, p.out, p.kv.pool, p.kv.block_elems, int(p.kv.type), p.kv.k_off, p.kv.v_off, p.kv.block_size,
               p.kv.kv_heads, p.kv.head_dim, p.row_ctx, p.row_table, p.tables, p.heads, p.scale, p.max_splits, p.part_acc,
               p.part_ml, p.counters, p.out_q8, p.q8_xs_off, in.k, in.v, in.position, in.slot);
  m.graphs.mix_bytes(&in.rope, sizeof in.rope);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_attention_rope_row(p, in, m.stream), "attention kernel (one row, RoPE and K/V store)");
  });
  if (a.q8_copy) {
    m.q8_of = out.data;
    m.q8_cols = q.cols;
  }
}

// Round 34: a step whose rows all take the warpgroup prefill attention. RoPE writes q rotated and
// rounded to the pool's type (what the attention rounds q to) into q16_buf and stores K/V, and the
// attention reads that copy and writes out with its bf16 copy beside it, for the output
// projection. rope_store_kv moved q through f32 memory twice and k once more, and the projection's
// input was converted after the attention (llama3-8b, 512 rows: 12.9 + 6.0 us a layer, ncu). False
// (nothing recorded) when the step's attention is not that kernel's alone.
bool CudaBackend::rope_attention_rows(uint32_t layer, Tensor q, Tensor k, const Tensor& v, uint32_t head_dim,
                                      const RopeConfig& rc, const AttentionShape& shape, Tensor out) {
  Impl& m = *impl_;
  const auto& s = m.layout.layers[layer];
  const cuda::RopeParams rp = rope_params(rc);
  const cuda::KvPoolView view{m.pool, m.block_elems, m.k_off[layer], m.v_off[layer], int(m.layout.block_size),
                              int(s.n_kv_heads), int(s.head_dim_k), m.kv_type, int64_t(m.num_blocks)};
  if (!cuda::rope_kv_rows_takes(rp, int(head_dim), view)) return false;
  m.touch({q, k, v}, {out});
  m.forget_q8();
  Impl::AttnLaunch a;
  if (!m.attn_launch(layer, q, shape, out, a) || a.n_tiles == 0 || a.rows != 0 || a.det_spans || !cuda::attn_wg_takes(a.p)) {
    return false;
  }
  const int64_t n = q.rows * q.cols;
  void* q16 = m.grow(m.q16_buf, size_t(n) * 2, "rotated q (16-bit)");
  void* out16 = m.bf16_act ? m.grow_bf16(m.x_bf16, size_t(n) * 2, "matmul activations (bf16)") : nullptr;
  const bool done = m.roped_take && m.roped.q16 == q16;  // q16 and the new K/V written by the Q/K/V launch
  m.roped_take = false;
  ++m.rope_rows_calls;
  if (done) ++m.qkv_rope_calls;
  cuda::AttnParams p = a.p;
  p.q16 = q16;
  p.out16 = out16;
  const cuda::AttnTile* tiles = a.tiles;
  const int n_tiles = a.n_tiles;
  const int32_t* positions = m.d_positions;
  const int64_t* slots = m.d_slots;
  const float *qd = q.data, *kd = k.data, *vd = v.data;
  const int64_t rows = q.rows, q_cols = q.cols;
  m.graphs.mix(60, qd, kd, vd, q16, out16, rows, q_cols, head_dim, positions, slots, p.out, p.ldo, p.kv.pool, p.kv.block_elems,
               int(p.kv.type), p.kv.k_off, p.kv.v_off, p.kv.block_size, p.kv.kv_heads, p.kv.head_dim, p.row_ctx, p.row_table,
               p.tables, p.heads, p.scale, tiles, n_tiles, done);
  m.graphs.mix_bytes(&rp, sizeof rp);
  m.graphs.run([=, &m] {
    if (!done) {
      m.launched(cuda::launch_rope_kv_rows(qd, q_cols, kd, vd, q16, rows, int(head_dim), positions, rp, view, slots, m.stream),
                 "rope_kv_rows kernel");
    }
    m.launched(cuda::launch_attention_tc(p, tiles, n_tiles, m.stream), "tensor-core attention kernel (rotated q16)");
  });
  if (out16 != nullptr) {
    m.bf16_of = out.data;
    m.bf16_elems = n;
    m.bf16_at = out16;
  }
  return true;
}

void CudaBackend::swiglu(const Tensor& gate, const Tensor& up, Tensor out) {
  if (gate.elements() != up.elements() || out.elements() != gate.elements()) throw_error("swiglu: shapes differ");
  Impl& m = *impl_;
  m.touch({gate, up}, {out});
  m.forget_q8();
  const int64_t n = int64_t(gate.elements());
  m.graphs.mix(9, gate.data, up.data, out.data, n);
  m.graphs.run([=, &m] { m.launched(cuda::launch_swiglu(gate.data, up.data, out.data, n, m.stream), "swiglu kernel"); });
}

void CudaBackend::add(const Tensor& a, const Tensor& b, Tensor out) {
  if (a.elements() != b.elements() || out.elements() != a.elements()) throw_error("add: shapes differ");
  Impl& m = *impl_;
  m.touch({a, b}, {out});
  m.forget_q8();
  const int64_t n = int64_t(a.elements());
  m.graphs.mix(10, a.data, b.data, out.data, n);
  m.graphs.run([=, &m] { m.launched(cuda::launch_add(a.data, b.data, out.data, n, m.stream), "add kernel"); });
}

void CudaBackend::gather_rows(const Tensor& x, std::span<const int32_t> rows, Tensor out) {
  Impl& m = *impl_;
  m.touch({x}, {out});
  m.forget_q8();
  if (out.rows != int64_t(rows.size()) || out.cols != x.cols) throw_error("gather_rows: output {} x {}", out.rows, out.cols);
  if (rows.size() > size_t(kMaxGridY)) throw_error("gather_rows: {} rows (at most {})", rows.size(), kMaxGridY);
  for (int32_t r : rows) {
    if (r < 0 || r >= x.rows) throw_error("gather_rows: row {} outside 0..{}", r, x.rows - 1);
  }
  if (rows.empty()) return;
  const size_t bytes = rows.size() * sizeof(int32_t);
  // The indices go up now (before a recorded step's graph, on the same stream); the graph reads them.
  void* d = m.grow(m.gather_buf, bytes, "gather indices");
  if (!std::equal(rows.begin(), rows.end(), m.last_gather.begin(), m.last_gather.end())) {
    m.graphs.early_input_changed();  // an early graph gathered the previous step's rows
    m.last_gather.assign(rows.begin(), rows.end());
  }
  std::memcpy(m.gather_staging.acquire(bytes), rows.data(), bytes);
  m.gather_staging.upload(d, bytes, m.stream);
  const auto* idx = static_cast<const int32_t*>(d);
  const int64_t n = int64_t(rows.size());
  m.graphs.mix(11, x.data, x.cols, idx, n, out.data);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_gather_rows(x.data, x.cols, idx, n, out.data, m.stream), "gather_rows kernel");
  });
}

void CudaBackend::copy_blocks(std::span<const std::pair<int32_t, int32_t>> pairs) {
  Impl& m = *impl_;
  m.forget_q8();
  m.use_device();
  m.graphs.flush();
  const size_t bytes = size_t(m.block_elems) * m.kv_elem;
  for (const auto& [src, dst] : pairs) {
    if (src < 0 || dst < 0 || uint32_t(src) >= m.num_blocks || uint32_t(dst) >= m.num_blocks) {
      throw_error("copy_blocks: block pair ({}, {}) outside the pool of {}", src, dst, m.num_blocks);
    }
    check(cudaMemcpyAsync(m.pool + dst * bytes, m.pool + src * bytes, bytes, cudaMemcpyDeviceToDevice,
                          m.stream),
          "cudaMemcpyAsync (copy_blocks)");
  }
}

// ---- fused ops (round 5) --------------------------------------------------------------------------

void CudaBackend::add_rms_norm(Tensor x, const Tensor& delta, const Weight& gain, float eps, Tensor out) {
  Impl& m = *impl_;
  m.touch({x, delta}, {out, x});
  if (gain.type != TensorType::F32 || gain.cols != x.cols || !cuda::fast_norm_supports(x.cols) || delta.rows != x.rows ||
      delta.cols != x.cols || out.rows != x.rows || out.cols != x.cols) {
    Backend::add_rms_norm(x, delta, gain, eps, out);  // add, then rms_norm (which checks the shapes)
    return;
  }
  const float* g = static_cast<const float*>(gain.data);
  const float* d = delta.data;
  void* q8 = m.norm_q8(out);
  bool f16 = false;
  void* xb = m.norm_copy16(out, f16);
  const cuda::NormRowsQ8 rq = m.norm_q8_rows(out);
  m.graphs.mix(14, x.data, d, g, x.rows, x.cols, eps, out.data, q8, xb, f16);
  m.graphs.mix(74, rq.base, rq.stride, rq.nt);
  m.graphs.run([=, &m] {
    if (x.rows == 1 && m.skip(1)) return;
    m.launched(cuda::launch_add_rms_norm(x.data, d, g, x.rows, x.cols, eps, out.data, q8, m.stream, xb, f16, rq), "add_rms_norm kernel");
  });
}

void CudaBackend::matmul_multi(const Tensor& x, std::span<const MatmulOut> outs) {
  Impl& m = *impl_;
  m.qkv_hint = m.rope_hint;  // this call's only (matmul_multi_dq)
  m.rope_hint.set = false;
  if (x.rows != 1 && matmul_multi_int8_rows(x, outs)) return;
  if (x.rows != 1 && m.bf16_act && outs.size() >= 2) {
    matmul_multi_rows(x, outs);
    return;
  }
  if (x.rows != 1) {
    Backend::matmul_multi(x, outs);
    return;
  }
  for (const MatmulOut& o : outs) {  // matmul's checks, before anything is launched
    const Weight& w = *o.w;
    if (x.cols != w.cols || o.out.cols != w.rows || o.out.rows != x.rows) {
      throw_error("matmul {}: {} x {} input, {} x {} output for a {} x {} weight", w.name, x.rows, x.cols, o.out.rows,
                  o.out.cols, w.rows, w.cols);
    }
    if (o.bias != nullptr && (o.bias->type != TensorType::F32 || o.bias->cols != w.rows)) throw_error("matmul {}: bad bias", w.name);
  }
  m.gemv_multi_row(x, outs, nullptr);
}

// One launch per weight type (Q, K and V usually share one), in the order of first appearance;
// Q4_K_M's two (Q/K in Q4_K, V in Q6_K) as one pair launch where the int8 kernels take both.
// Shapes already checked; rn as gemv_batch1's.
void CudaBackend::Impl::gemv_multi_row(const Tensor& x, std::span<const MatmulOut> outs, const RowNormX* rn) {
  Impl& m = *this;
  std::vector<bool> done(outs.size(), false);
  std::vector<std::pair<TensorType, cuda::GemvSegs>> groups;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (done[i]) continue;
    cuda::GemvSegs segs;
    const TensorType type = outs[i].w->type;
    for (size_t j = i; j < outs.size() && segs.count < cuda::kMaxGemvSegs; ++j) {
      if (done[j] || outs[j].w->type != type) continue;
      const MatmulOut& o = outs[j];
      segs.add(o.w->data, o.w->rows, o.out.data, o.bias != nullptr ? static_cast<const float*>(o.bias->data) : nullptr);
      done[j] = true;
    }
    groups.emplace_back(type, segs);
  }
  if (groups.size() == 2 && m.gemv_pair_for(groups[0].first, groups[0].second, groups[1].first, groups[1].second, x.cols)) {
    m.gemv_batch1_pair(groups[0].first, groups[0].second, groups[1].first, groups[1].second, x, rn);
    return;
  }
  for (const auto& [type, segs] : groups) m.gemv_batch1(type, segs, x, rn);
}

// 2-16 rows on the int8 rows kernels (round 52): the weights of each type as one launch (Q4_K_M: Q
// and K, then V; Q8_0: all three), x quantized once. False: nothing recorded (matmul, one by one).
bool CudaBackend::matmul_multi_int8_rows(const Tensor& x, std::span<const MatmulOut> outs) {
  Impl& m = *impl_;
  const int64_t M = x.rows, K = x.cols;
  if (!m.rows_fused || outs.size() < 2 || outs.size() > size_t(cuda::kMaxGemvSegs) || M < 2 || M > 65535) return false;
  const TensorType t0 = outs[0].w->type;
  const bool mma = m.mma_rows_for(t0, M, K);
  for (const MatmulOut& o : outs) {
    const Weight& w = *o.w;
    // Shapes and biases matmul would refuse stay with matmul, which names the problem.
    if (w.cols != K || o.out.cols != w.rows || o.out.rows != M || (o.bias != nullptr && (o.bias->type != TensorType::F32 || o.bias->cols != w.rows))) {
      return false;
    }
    if (!m.int8_rows_for(w.type, M, K) || m.mma_rows_for(w.type, M, K) != mma) return false;
    if (!mma && !cuda::gemv_i8_rows_fused_supports(w.type, K, int(M))) return false;
  }
  // Weights in order of first appearance by type, one launch each.
  std::vector<std::pair<TensorType, cuda::GemvSegs>> groups;
  for (const MatmulOut& o : outs) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == o.w->type; });
    if (it == groups.end()) it = groups.insert(groups.end(), {o.w->type, cuda::GemvSegs{}});
    it->second.add(o.w->data, o.w->rows, o.out.data, o.bias != nullptr ? static_cast<const float*>(o.bias->data) : nullptr);
  }
  if (groups.size() == outs.size()) return false;  // nothing to merge: matmul's launches
  for (const auto& [type, segs] : groups) {
    if (mma ? !cuda::gemv_mma_segs_supports(type, segs, K, m.sms) : !cuda::gemv_i8_rows_segs_supports(type, segs, K, int(M))) return false;
  }
  m.touch({x});
  for (const MatmulOut& o : outs) m.wrote(o.out);
  bool quantize = false;
  void* q8 = m.q8_rows_input(x, mma, quantize);
  const float* xd = x.data;
  const int sms = m.sms;
  for (const auto& [type, segs] : groups) {
    for (int g = 0; g < segs.count; ++g) m.graphs.mix(71, int(type), segs.w[g], segs.rows[g], segs.out[g], segs.bias[g]);
  }
  m.graphs.mix(72, xd, M, K, q8, quantize, mma, groups.size());
  m.rows_fused_recorded(M, K, mma, quantize);
  m.graphs.run([=, &m] {
    if (quantize) m.launched(m.quantize_rows(mma, xd, M, K, q8), mma ? "quantize_mma_x kernel" : "quantize_q8_rows kernel");
    for (const auto& [type, segs] : groups) {
      m.launched(mma ? cuda::launch_gemv_mma_segs(type, segs, K, q8, int(M), sms, m.stream)
                     : cuda::launch_gemv_i8_rows_segs(type, segs, K, q8, int(M), m.stream),
                 mma ? "int8 mma rows kernel (weights in one launch)" : "int8 gemv rows kernel (weights in one launch)");
    }
  });
  for (const MatmulOut& o : outs) {  // an output over x: x's copy is stale
    if (o.out.data < x.data + M * K && x.data < o.out.data + o.out.elements()) m.q8r_of = nullptr;
  }
  return true;
}

// 2-16 rows on the int8 rows kernels (round 52): gate and up in one launch that writes
// silu(gate)·up. False: nothing recorded.
bool CudaBackend::matmul_swiglu_int8_rows(const Weight& gate, const Weight& up, const Tensor& x, Tensor out) {
  Impl& m = *impl_;
  const int64_t M = x.rows, N = gate.rows, K = gate.cols;
  if (!m.rows_fused || M < 2 || M > 65535 || gate.type != up.type || up.rows != N || up.cols != K || x.cols != K ||
      out.rows != M || out.cols != N || !m.int8_rows_for(gate.type, M, K)) {
    return false;
  }
  const TensorType type = gate.type;
  const bool mma = m.mma_rows_for(type, M, K);
  if (!mma && !cuda::gemv_i8_rows_fused_supports(type, K, int(M))) return false;
  m.touch({x});
  m.wrote(out);
  bool quantize = false;
  void* q8 = m.q8_rows_input(x, mma, quantize);
  const float* xd = x.data;
  const void *gw = gate.data, *uw = up.data;
  float* od = out.data;
  const int sms = m.sms;
  m.graphs.mix(73, int(type), gw, uw, N, K, M, xd, q8, quantize, mma, od);
  m.rows_fused_recorded(M, K, mma, quantize);
  m.graphs.run([=, &m] {
    if (quantize) m.launched(m.quantize_rows(mma, xd, M, K, q8), mma ? "quantize_mma_x kernel" : "quantize_q8_rows kernel");
    m.launched(mma ? cuda::launch_gemv_mma_swiglu(type, gw, uw, N, K, q8, int(M), od, sms, m.stream)
                   : cuda::launch_gemv_i8_rows_swiglu(type, gw, uw, N, K, q8, int(M), od, m.stream),
               mma ? "int8 mma rows swiglu kernel" : "int8 gemv rows swiglu kernel");
  });
  return true;
}

// Many rows (round 33): the weights whose matmul would take the register-A dequantizing kernel
// (dq_tma.h), two or three of them (a layer's Q, K and V), as one launch. False: nothing launched.
bool CudaBackend::matmul_multi_dq(const Tensor& x, std::span<const MatmulOut> outs) {
  Impl& m = *impl_;
  const int64_t M = x.rows, K = x.cols;
  std::array<cuda::DqSeg, cuda::kMaxDqSegs> segs{};
  std::array<Tensor, cuda::kMaxDqSegs> written{};
  int count = 0;
  for (const MatmulOut& o : outs) {
    const Weight& w = *o.w;
    // Shapes and biases matmul would refuse stay with matmul, which names the problem.
    if (w.cols != K || o.out.cols != w.rows || o.out.rows != M || (o.bias != nullptr && (o.bias->type != TensorType::F32 || o.bias->cols != w.rows))) {
      return false;
    }
    if (!m.dq_mma_for(w.type, M, K, w.rows, w.data) || m.dq_plan(w.type, M, K, w.rows).rs != 4) continue;
    if (count == cuda::kMaxDqSegs) return false;
    written[count] = o.out;
    segs[count++] = cuda::DqSeg{w.type, w.data, w.rows, o.out.data, o.out.cols,
                                o.bias != nullptr ? static_cast<const float*>(o.bias->data) : nullptr};
  }
  if (count < 2 || count != int(outs.size()) || !cuda::dq_tma_group_supports(segs.data(), count, K)) return false;
  const cuda::DqMmaPlan plan = cuda::dq_tma_group_plan(segs.data(), count, K, M, m.sms, m.dq_tma_bt, m.dq_splits);
  // Round 37: the hinted layer's RoPE and K/V store in the launch's end (the f32 outputs as before).
  cuda::DqRope rope{};
  const bool fuse = count == 3 && m.qkv_rope_for(m.qkv_hint, written[0], written[1], written[2], segs.data(), count, rope);
  float* ws;
  int32_t* cnt;
  m.dq_scratch(plan, ws, cnt);
  const void* xb = m.bf16_input(x);
  for (int i = 0; i < count; ++i) m.wrote(written[i]);
  for (int i = 0; i < count; ++i) m.graphs.mix(57, int(segs[i].type), segs[i].w, segs[i].n, segs[i].out, segs[i].ldo, segs[i].bias);
  m.graphs.mix(58, count, K, M, xb, ws, cnt, plan.splits, plan.nt, fuse);
  if (fuse) {
    m.graphs.mix(68, rope.q16, rope.q_cols, rope.cs, rope.head_dim, rope.half, rope.interleaved, rope.kv.pool, rope.kv.block_elems,
                 rope.kv.k_off, rope.kv.v_off, rope.kv.block_size, rope.kv.kv_heads, rope.kv.head_dim, int(rope.kv.type), rope.slots);
    m.roped = {true, m.qkv_hint.layer, written[0].data, written[1].data, written[2].data, M, rope.q16};
  }
  ++m.dq_group_calls;
  m.graphs.run([=, &m] {
    const cudaError_t rc = fuse ? cuda::launch_dq_tma_group_rope(segs.data(), count, K, xb, M, plan, ws, cnt, rope, m.stream)
                                : cuda::launch_dq_tma_group(segs.data(), count, K, xb, M, plan, ws, cnt, false, m.stream);
    if (rc != cudaSuccess) {
      throw_error("CUDA backend: dq_tma group kernel ({} weights, {} rows, {}-token tiles, {} row tiles, K split {}{}) failed: {} ({})", count, M,
                  plan.nt * 8, plan.row_tiles, plan.splits, fuse ? ", RoPE in its end" : "", cudaGetErrorString(rc), cuda::dq_tma_last_problem());
    }
  });
  return true;
}

// Many rows (round 7): two BF16 weights of one shape (K and V) in one strided-batched GEMM over the
// shared bf16 x; every other output through matmul (which reuses the same bf16 copy of x).
void CudaBackend::matmul_multi_rows(const Tensor& x, std::span<const MatmulOut> given) {
  Impl& m = *impl_;
  if (m.dq_group && matmul_multi_dq(x, given)) return;
  // Weights with dense copies that take the cuBLAS path count as BF16 here (pairs of K and V).
  std::vector<Weight> views(given.size());
  std::vector<MatmulOut> outs(given.begin(), given.end());
  for (size_t i = 0; i < outs.size(); ++i) {
    const Weight& w = *given[i].w;
    if (m.cublas_bf16(w.type, x.rows, w.cols, w.rows, w.data)) {
      views[i] = m.dense_view(w);
      outs[i].w = &views[i];
    }
  }
  std::vector<bool> done(outs.size(), false);
  const auto pairable = [&](const MatmulOut& o) {
    const Weight& w = *o.w;
    return w.type == TensorType::BF16 && x.cols == w.cols && o.out.cols == w.rows && o.out.rows == x.rows &&
           m.cublas_bf16(w.type, x.rows, w.cols, w.rows) && (o.bias == nullptr || (o.bias->type == TensorType::F32 && o.bias->cols == w.rows));
  };
  for (size_t i = 0; i < outs.size(); ++i) {
    if (done[i] || !pairable(outs[i])) continue;
    for (size_t j = i + 1; j < outs.size(); ++j) {
      if (done[j] || !pairable(outs[j]) || outs[j].w->rows != outs[i].w->rows) continue;
      const MatmulOut *a = &outs[i], *c = &outs[j];
      if (reinterpret_cast<uintptr_t>(a->w->data) > reinterpret_cast<uintptr_t>(c->w->data)) std::swap(a, c);
      if (!m.pair_ok(a->w->data, c->w->data) || !m.pair_ok(a->out.data, c->out.data)) continue;  // strides of one sign
      const void *w0 = a->w->data, *w1 = c->w->data;
      float *o0 = a->out.data, *o1 = c->out.data;
      const float* b0 = a->bias != nullptr ? static_cast<const float*>(a->bias->data) : nullptr;
      const float* b1 = c->bias != nullptr ? static_cast<const float*>(c->bias->data) : nullptr;
      const int64_t M = x.rows, N = a->w->rows, K = a->w->cols;
      m.wrote(a->out);
      m.wrote(c->out);
      const void* xb = m.bf16_input(x);
      m.graphs.mix(42, w0, w1, N, K, M, xb, o0, o1, b0, b1);
      m.graphs.run([=, &m] {
        m.gemm_pair(w0, w1, N, K, xb, M, o0, o1, CUDA_R_32F, N);
        if (b0 != nullptr) m.launched(cuda::launch_add_bias(o0, M, N, N, b0, m.stream), "add_bias kernel");
        if (b1 != nullptr) m.launched(cuda::launch_add_bias(o1, M, N, N, b1, m.stream), "add_bias kernel");
      });
      done[i] = done[j] = true;
      break;
    }
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!done[i]) matmul(*outs[i].w, x, outs[i].out, outs[i].bias);
  }
}

void CudaBackend::matmul_swiglu(const Weight& gate, const Weight& up, const Tensor& x, Tensor out, Tensor up_out) {
  Impl& m = *impl_;
  if (x.rows != 1 && matmul_swiglu_int8_rows(gate, up, x, out)) return;
  // (gate.rows % 8: the bf16 SwiGLU works in 16-byte pieces, and up's rows follow gate's in one buffer.)
  if (x.rows != 1 && m.bf16_act && m.swiglu_rows && gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols &&
      gate.rows % 8 == 0 && x.cols == gate.cols && out.cols == gate.rows && out.rows == x.rows &&
      m.dq_mma_for(gate.type, x.rows, gate.cols, gate.rows, gate.data) && m.dq_plan(gate.type, x.rows, gate.cols, gate.rows).rs == 4) {
    matmul_swiglu_dq(gate, up, x, out);
    return;
  }
  if (x.rows != 1 && m.bf16_act && m.swiglu_rows && gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols &&
      m.cublas_bf16(gate.type, x.rows, gate.cols, gate.rows, gate.data) && gate.rows % 8 == 0 && x.cols == gate.cols && out.cols == gate.rows &&
      out.rows == x.rows) {
    matmul_swiglu_rows(gate, up, x, out);
    return;
  }
  if (x.rows != 1 && m.bf16_act && m.swiglu_rows && !m.deterministic && gate.type == TensorType::F16 &&
      up.type == TensorType::F16 && gate.rows == up.rows && gate.cols == up.cols && gate.rows % 8 == 0 && x.cols == gate.cols &&
      out.cols == gate.rows && out.rows == x.rows) {
    matmul_swiglu_rows_f16(gate, up, x, out);
    return;
  }
  if (x.rows != 1 || gate.type != up.type || gate.rows != up.rows || gate.cols != up.cols) {
    Backend::matmul_swiglu(gate, up, x, out, up_out);
    return;
  }
  // The deterministic mode's F16/BF16 batch 1: the ops its many rows take (two matmuls, then
  // swiglu), the two matmuls as one launch of two segments (the same bits as one launch each).
  if (m.det16_for(gate.type, gate.cols)) {
    if (x.cols != gate.cols || out.rows != 1 || out.cols != gate.rows || up_out.rows != 1 || up_out.cols != up.rows) {
      Backend::matmul_swiglu(gate, up, x, out, up_out);  // matmul's checks name the problem
      return;
    }
    cuda::GemvSegs segs;
    segs.add(gate.data, gate.rows, out.data, nullptr);
    segs.add(up.data, up.rows, up_out.data, nullptr);
    m.gemv_batch1(gate.type, segs, x);
    swiglu(out, up_out, out);
    return;
  }
  if (x.cols != gate.cols || out.cols != gate.rows || out.rows != 1) {
    throw_error("matmul_swiglu {}: {} x {} input, {} x {} output for a {} x {} weight", gate.name, x.rows, x.cols, out.rows,
                out.cols, gate.rows, gate.cols);
  }
  const TensorType type = gate.type;
  const void *gw = gate.data, *uw = up.data;
  const int64_t N = gate.rows, K = gate.cols;
  const float* xd = x.data;
  float* od = out.data;
  const bool i8 = m.int8_for(type, K);
  m.touch({x});
  bool quantize = false;
  void* q8 = i8 ? m.q8_input(x, quantize) : nullptr;
  m.wrote(out);
  m.graphs.mix(15, type, gw, uw, N, K, xd, od, q8, quantize);
  m.graphs.run([=, &m] {  // silu(gate)·up in the GEMV's epilogue: up never goes to memory
    if (!i8) {
      if (!m.skip(16)) m.launched(cuda::launch_gemv1_swiglu(type, gw, uw, N, K, xd, od, m.stream), "gemv swiglu kernel");
      return;
    }
    if (quantize && !m.skip(8)) m.launched(cuda::launch_quantize_q8(xd, K, q8, m.stream), "quantize_q8 kernel");
    if (!m.skip(16)) m.launched(cuda::launch_gemv_i8_swiglu(type, gw, uw, N, K, q8, od, m.stream), "int8 gemv swiglu kernel");
  });
}

// Round 19: the batch-1 layer tail as one kernel (layer_kernel.h) when every weight is Q4_K/Q6_K on
// the int8 path and the attention left its int8 copy; otherwise the ops one by one (backend.h).
void CudaBackend::layer_tail(const Tensor& attn, Tensor x, Tensor h, Tensor o, Tensor g, Tensor u, const LayerTail& t) {
  Impl& m = *impl_;
  const auto fallback = [&] {
    if (!layer_tail_row(attn, x, h, g, t)) Backend::layer_tail(attn, x, h, o, g, u, t);
  };
  if (!m.layer_kernel || m.deterministic || m.ablate != 0 || x.rows != 1 || t.next_norm == nullptr || t.next_qkv.empty() ||
      t.next_qkv.size() > size_t(cuda::kLayerMaxSegs) || attn.rows != 1 || attn.cols % 32 != 0 || m.lazy.data != nullptr ||
      m.lazy_norm.out != nullptr) {
    return x.rows >= 2 ? layer_tail_rows(attn, x, h, o, g, u, t) : fallback();
  }
  const auto i8 = [&](const Weight* w, int64_t k) { return w != nullptr && w->cols == k && m.int8_for(w->type, k); };
  const auto gain_ok = [&](const Weight* w) { return w != nullptr && w->type == TensorType::F32 && w->cols == x.cols; };
  const int64_t dim = x.cols, qd = attn.cols, ffn = t.gate->rows;
  if (!i8(t.wo, qd) || t.wo->rows != dim || !i8(t.gate, dim) || !i8(t.up, dim) || t.up->rows != ffn || !i8(t.down, ffn) ||
      t.down->rows != dim || !gain_ok(t.ffn_norm) || !gain_ok(t.next_norm) || o.rows != 1 || o.cols != dim || h.rows != 1 ||
      h.cols != dim || g.rows != 1 || g.cols != ffn) {
    return fallback();
  }
  cuda::LayerTailArgs a;
  a.q_dim = qd, a.dim = dim, a.ffn = ffn;
  a.x = x.data, a.o = o.data, a.g = g.data, a.h = h.data;
  a.ffn_gain = static_cast<const float*>(t.ffn_norm->data);
  a.next_gain = static_cast<const float*>(t.next_norm->data);
  a.eps = t.eps;
  const auto seg = [](const Weight& w, float* out) { return cuda::LayerWeight{w.data, w.type, w.rows, out}; };
  a.wo.seg[0] = seg(*t.wo, o.data), a.wo.count = 1;
  a.gate_up.seg[0] = seg(*t.gate, g.data), a.gate_up.seg[1] = seg(*t.up, g.data), a.gate_up.count = 2, a.gate_up.swiglu = true;
  a.down.seg[0] = seg(*t.down, o.data), a.down.count = 1;
  for (const MatmulOut& q : t.next_qkv) {
    if (q.bias != nullptr || !i8(q.w, dim) || q.out.rows != 1 || q.out.cols != q.w->rows) return fallback();
    a.qkv.seg[a.qkv.count++] = seg(*q.w, q.out.data);
  }
  if (!cuda::layer_tail_supported(a)) return fallback();
  a.g_q8 = m.grow(m.layer_gq8, cuda::q8_bytes(ffn), "layer kernel activations (int8)");
  bool quantize = false;  // the attention left no int8 copy of its output: quantize it first
  void* q8 = m.q8_input(attn, quantize);
  a.attn_q8 = q8;
  const float* ad = attn.data;
  m.touch({attn, x, o}, {h, o, g, x});
  for (const MatmulOut& q : t.next_qkv) m.wrote(q.out);
  m.wrote(x), m.wrote(h), m.wrote(o), m.wrote(g);
  m.forget_q8();  // the kernel leaves no int8 copy in x_q8_norm (it read the attention's from there)
  const void* old = m.layer_sync.get();
  const size_t old_size = m.layer_sync.size();
  auto* sync = static_cast<unsigned*>(m.grow(m.layer_sync, size_t(cuda::layer_sync_words(ffn)) * sizeof(unsigned), "layer kernel barrier"));
  if (sync != old || m.layer_sync.size() != old_size) check(cudaMemsetAsync(sync, 0, m.layer_sync.size(), m.stream), "layer kernel barrier");
  ++m.layer_kernel_calls;
  m.graphs.mix(63, ad, quantize, a.attn_q8, qd, dim, ffn, a.x, a.o, a.g, a.h, a.ffn_gain, a.next_gain, a.eps, sync, a.g_q8);
  for (const cuda::LayerPhase* ph : {&a.wo, &a.gate_up, &a.down, &a.qkv}) {
    for (int i = 0; i < ph->count; ++i) m.graphs.mix(ph->seg[i].w, int(ph->seg[i].type), ph->seg[i].rows, ph->seg[i].out);
  }
  m.graphs.run([=, &m] {
    if (quantize) m.launched(cuda::launch_quantize_q8(ad, qd, q8, m.stream), "quantize_q8 kernel");
    m.launched(cuda::launch_layer_tail(a, sync, m.stream), "layer kernel");
  });
}

// Round 43: one token row with its two norms carried by the GEMVs around them (gemv_kernels.h,
// RowNormOut / RowNormIn), so that neither is a kernel on the decode chain: the output projection
// writes x += wo·attn with the int8 copy of x ⊙ ffn_norm and its partial sums of squares, gate/up
// read that copy, the down projection writes x += down·g with the next norm's copy, and the next
// Q/K/V read it. h's f32 rows are a lazy norm (Impl::lazy_norm): the norm kernel writes them from x
// only if an op reads them. o is not written (scratch). False: nothing recorded (the ops run).
bool CudaBackend::layer_tail_row(const Tensor& attn, Tensor x, Tensor h, Tensor g, const LayerTail& t) {
  Impl& m = *impl_;
  const int64_t dim = x.cols, qd = attn.cols;
  if (!m.row_norm || m.deterministic || m.ablate != 0 || m.lazy.data != nullptr || x.rows != 1 || attn.rows != 1 ||
      h.rows != 1 || h.cols != dim || !cuda::fast_norm_supports(dim) || t.gate == nullptr || t.up == nullptr) {
    return false;
  }
  const auto gain_ok = [&](const Weight* w) { return w == nullptr || (w->type == TensorType::F32 && w->cols == dim); };
  const auto producer = [&](const Weight* w, int64_t k) {  // x += w·a with a norm's copy
    return w != nullptr && w->cols == k && w->rows == dim && m.int8_for(w->type, k) && cuda::gemv_norm_out_supports(w->type, dim, k);
  };
  const auto consumer = [&](const Weight* w) {  // reads a norm's copy
    return w != nullptr && w->cols == dim && m.int8_for(w->type, dim) && cuda::gemv_norm_in_supports(w->type, dim);
  };
  const int64_t ffn = t.gate->rows;
  if (!gain_ok(t.ffn_norm) || t.ffn_norm == nullptr || !gain_ok(t.next_norm) || !producer(t.wo, qd) || !consumer(t.gate) ||
      !consumer(t.up) || t.up->type != t.gate->type || t.up->rows != ffn || g.rows != 1 || g.cols != ffn || t.down == nullptr ||
      t.down->cols != ffn || t.down->rows != dim || !m.int8_for(t.down->type, ffn) ||
      (t.next_norm != nullptr && !producer(t.down, ffn))) {
    return false;
  }
  for (const MatmulOut& q : t.next_qkv) {
    if (!consumer(q.w) || q.out.rows != 1 || q.out.cols != q.w->rows ||
        (q.bias != nullptr && (q.bias->type != TensorType::F32 || q.bias->cols != q.w->rows))) {
      return false;
    }
  }
  ++m.row_norm_calls;
  void* zq = m.grow(m.row_norm_q8, cuda::q8_bytes(dim), "row norm activations (int8)");
  auto* sums = static_cast<float*>(m.grow(m.row_norm_sums, size_t(dim / 32) * sizeof(float), "row norm partial sums"));
  const Impl::RowNormX rn{zq, cuda::RowNormIn{sums, t.eps}};
  float* xd = x.data;
  // x += w·a (a's int8 copy: its producer's, or quantized now), then w's norm copy of the new x;
  // without a norm, the plain batch-1 launch with x as its bias.
  const auto add_into_x = [&](const Weight& w, const Tensor& a, const Weight* norm) {
    if (norm == nullptr) {
      cuda::GemvSegs segs;
      segs.add(w.data, dim, xd, xd);
      m.gemv_batch1(w.type, segs, a);  // its write of x materializes a pending norm of h first
      return;
    }
    m.touch({a, x}, {x});
    bool quantize = false;
    void* q8 = m.q8_input(a, quantize);
    m.wrote(x);
    const TensorType type = w.type;
    const void* wd = w.data;
    const int64_t K = a.cols;
    const float* ad = a.data;
    const cuda::RowNormOut no{static_cast<const float*>(norm->data), zq, sums};
    m.graphs.mix(69, type, wd, K, dim, ad, q8, quantize, xd, no.gain, zq, sums);
    m.graphs.run([=, &m] {
      if (quantize) m.launched(cuda::launch_quantize_q8(ad, K, q8, m.stream), "quantize_q8 kernel");
      m.launched(cuda::launch_gemv_i8_norm_out(type, wd, dim, K, q8, xd, no, m.stream), "int8 gemv kernel (x += w a, norm copy)");
    });
    m.lazy_norm = {h.data, xd, no.gain, 1, dim, t.eps};
  };
  m.touch({}, {h});  // h is overwritten below: a pending norm of it is dead
  add_into_x(*t.wo, attn, t.ffn_norm);
  {  // g = silu(s·gate·z)·(s·up·z)
    const TensorType type = t.gate->type;
    const void *gw = t.gate->data, *uw = t.up->data;
    float* gd = g.data;
    m.wrote(g);
    m.graphs.mix(70, type, gw, uw, ffn, dim, gd, zq, sums, t.eps);
    m.graphs.run([=, &m] {
      m.launched(cuda::launch_gemv_i8_swiglu(type, gw, uw, ffn, dim, zq, gd, m.stream, rn.in), "int8 gemv swiglu kernel (row norm)");
    });
  }
  // With a next norm, h's rows of the ffn norm are dead (the next norm overwrites them); without,
  // the write of x below materializes them first (backend.h: h is the ffn norm's then).
  if (t.next_norm != nullptr) m.touch({}, {h});
  add_into_x(*t.down, g, t.next_norm);
  if (t.next_norm != nullptr && !t.next_qkv.empty()) {
    m.rope_hint.set = false;  // expect_rope's hint is the Q/K/V matmul's only (as matmul_multi)
    m.gemv_multi_row(h, t.next_qkv, &rn);
  }
  return true;
}

// Round 34: many rows with the residual stream updated inside the GEMMs. Where the register-A
// dequantizing GEMM takes a projection, x += w·a is its tile's store (matmul_add_rows) and the
// norm after it reads x alone and writes only the bf16 copy the next matmuls read (norm_rows16;
// its f32 rows on demand). The unfused add_rms_norm read x and o and wrote x, h and the copy: 36 MB
// a llama3-8b norm at 512 rows (12.4 us, ncu), 12 MB now, and o is not written at all. Same bits:
// x + o in add_rms_norm's order, then the same norm of the same x. Elsewhere, each projection takes
// matmul + add_rms_norm as before. o is left unwritten (scratch; backend.h).
void CudaBackend::layer_tail_rows(const Tensor& attn, Tensor x, Tensor h, Tensor o, Tensor g, Tensor u, const LayerTail& t) {
  Impl& m = *impl_;
  const auto gain_ok = [&](const Weight* w) {
    return w == nullptr || (w->type == TensorType::F32 && w->cols == x.cols && cuda::fast_norm_supports(x.cols));
  };
  if (!m.residual_rows || !m.bf16_act || m.deterministic || m.ablate != 0 || m.copies_f16 || !gain_ok(t.ffn_norm) ||
      !gain_ok(t.next_norm) || h.rows != x.rows || h.cols != x.cols) {
    return Backend::layer_tail(attn, x, h, o, g, u, t);
  }
  m.touch({}, {h});  // h is written below: its pending f32 rows (the last norm's, read by Q/K/V) are dead
  const auto residual = [&](const Weight& w, const Tensor& a, const Weight* norm) {
    if (matmul_add_rows(w, a, x)) {
      if (norm != nullptr) norm_rows16(x, *norm, t.eps, h);
      return;
    }
    matmul(w, a, o, nullptr);
    if (norm != nullptr) {
      add_rms_norm(x, o, *norm, t.eps, h);
    } else {
      add(x, o, x);
    }
  };
  residual(*t.wo, attn, t.ffn_norm);
  matmul_swiglu(*t.gate, *t.up, h, g, u);
  // The next norm overwrites h whole: its f32 rows from the ffn norm are never needed (without a
  // next norm they stay h's value, materialized when x changes).
  if (t.next_norm != nullptr) m.touch({}, {h});
  residual(*t.down, g, t.next_norm);
  if (t.next_norm != nullptr && !t.next_qkv.empty()) matmul_multi(h, t.next_qkv);
}

// x += w·a on the register-A dequantizing GEMM (dq_tma.h, DqSeg::add) where matmul would take that
// kernel for these shapes; false (nothing recorded) elsewhere.
bool CudaBackend::matmul_add_rows(const Weight& w, const Tensor& a, Tensor x) {
  Impl& m = *impl_;
  const int64_t M = a.rows, N = w.rows, K = w.cols;
  if (M < 2 || a.cols != K || x.rows != M || x.cols != N || !m.bf16_act || m.deterministic || cuda::dq_tma_direct_store()) return false;
  if (m.int8_rows_for(w.type, M, K) || !m.dq_mma_for(w.type, M, K, N, w.data)) return false;  // matmul's other paths
  const cuda::DqMmaPlan plan = m.dq_plan(w.type, M, K, N);
  if (plan.rs != 4) return false;
  const cuda::DqSeg seg{w.type, w.data, N, x.data, x.cols, nullptr, true};
  if (!cuda::dq_tma_group_supports(&seg, 1, K)) return false;
  m.touch({x}, {x});  // a is read through its bf16 copy (a pending SwiGLU's f32 rows stay pending)
  float* ws;
  int32_t* cnt;
  m.dq_scratch(plan, ws, cnt);
  const void* xb = m.bf16_input(a);
  m.wrote(x);
  ++m.residual_rows_calls;
  m.graphs.mix(61, w.type, w.data, N, K, M, xb, ws, cnt, x.data, x.cols, plan.splits, plan.nt);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_dq_tma_group(&seg, 1, K, xb, M, plan, ws, cnt, false, m.stream), "dq_tma kernel (x += w a)");
  });
  return true;
}

// h = rms_norm(x) at 2+ rows writing only the bf16 copy the next matmuls read; h's f32 rows on
// demand (Impl::lazy_norm). Where the copy is not bf16 (F16 weights, the deterministic mode):
// rms_norm.
void CudaBackend::norm_rows16(Tensor x, const Weight& gain, float eps, Tensor h) {
  Impl& m = *impl_;
  if (x.rows < 2 || !m.bf16_act || m.deterministic || m.copies_f16 || gain.type != TensorType::F32 || gain.cols != x.cols ||
      !cuda::fast_norm_supports(x.cols) || h.rows != x.rows || h.cols != x.cols) {
    return rms_norm(x, gain, eps, h);
  }
  m.touch({x}, {h});
  m.norm_q8(h);  // none at 2+ rows; forgets the old copies
  bool f16 = false;
  void* xb = m.norm_copy16(h, f16);
  const float* g = static_cast<const float*>(gain.data);
  float* xd = x.data;
  const int64_t rows = x.rows, cols = x.cols;
  m.graphs.mix(59, xd, g, rows, cols, eps, h.data, xb);
  m.graphs.run([=, &m] {
    m.launched(cuda::launch_add_rms_norm(xd, nullptr, g, rows, cols, eps, nullptr, nullptr, m.stream, xb, false), "rms_norm kernel (bf16 copy)");
  });
  m.lazy_norm = {h.data, xd, g, rows, cols, eps};
}

// Many rows (round 7): gate and up GEMMs write bf16 (one strided-batched call for BF16 weights),
// then one kernel writes silu(gate)·up in f32 and its bf16 copy for the down projection.
void CudaBackend::matmul_swiglu_rows(const Weight& gate_w, const Weight& up_w, const Tensor& x, Tensor out) {
  Impl& m = *impl_;
  // Dense copies of both: BF16 weights (one batched call for the pair below 1 024 rows).
  const Weight gate_copy = m.dense_view(gate_w), up_copy = m.dense_view(up_w);
  const bool dense = gate_copy.data != gate_w.data && up_copy.data != up_w.data;
  const Weight& gate = dense ? gate_copy : gate_w;
  const Weight& up = dense ? up_copy : up_w;
  const TensorType type = gate.type;
  const int64_t M = x.rows, N = gate.rows, K = gate.cols, n = M * N;
  m.wrote(out);        // drops a pending SwiGLU output that this one overwrites
  m.materialize();     // any other: its gate/up in gu_bf16 are about to be overwritten
  // Workspaces first (a reallocation drops a copy that lived there), then x's bf16 copy.
  auto* gu = static_cast<uint8_t*>(m.grow_bf16(m.gu_bf16, size_t(2 * n) * 2, "gate/up activations (bf16)"));
  void* ob = m.grow_bf16(m.act_bf16, size_t(n) * 2, "swiglu activations (bf16)");
  const int64_t tile = m.weight_tile(type, N, K);
  void* wb = m.weight_tile_buffer(type, N, K, tile);
  const void* xb = m.bf16_input(x);
  const void *gw = gate.data, *uw = up.data;
  const bool gate_first = reinterpret_cast<uintptr_t>(gw) < reinterpret_cast<uintptr_t>(uw);  // lower weight: first half of gu
  // One batched call for BF16 gate/up below 1 024 rows; measured (H200, llama3-8b shapes): 512 rows
  // 157 us batched vs 173 us as two calls, 2 048 rows 631 vs 612 us.
  const bool paired = type == TensorType::BF16 && M < 1024 && m.pair_ok(gate_first ? gw : uw, gate_first ? uw : gw);
  uint8_t* gout = gu + (gate_first ? 0 : n * 2);
  uint8_t* uout = gu + (gate_first ? n * 2 : 0);
  float* od = out.data;
  const bool lazy = m.lazy_swiglu;  // f32 rows only when an op reads them (Impl::touch)
  m.graphs.mix(43, type, gw, uw, N, K, M, xb, gu, ob, od, tile, wb, lazy, paired);
  m.graphs.run([=, &m] {
    if (paired) {
      m.gemm_pair(gate_first ? gw : uw, gate_first ? uw : gw, N, K, xb, M, gu, gu + n * 2, CUDA_R_16BF, N);
    } else {
      m.gemm_bf16(type, gw, N, K, xb, M, gout, CUDA_R_16BF, N, tile, wb);
      m.gemm_bf16(type, uw, N, K, xb, M, uout, CUDA_R_16BF, N, tile, wb);
    }
    m.launched(cuda::launch_swiglu_bf16(gout, uout, lazy ? nullptr : od, ob, n, m.stream), "swiglu_bf16 kernel");
  });
  m.bf16_of = od;
  m.bf16_elems = n;
  m.bf16_at = ob;
  if (lazy) m.lazy = {od, n, gout, uout};
}

// Many rows of quantized weights on round 28's register-A kernel (dq_tma.h, plan rs 4): gate and
// up written in bf16 by the kernel itself, then the BF16 path's SwiGLU (f32 rows on demand, the bf16
// copy for the down projection). Through matmul they were f32 rows, an f32 SwiGLU (37 us at 512
// rows of llama3-8b) and a conversion for the down projection (round 28, call 4).
void CudaBackend::matmul_swiglu_dq(const Weight& gate, const Weight& up, const Tensor& x, Tensor out) {
  Impl& m = *impl_;
  const TensorType type = gate.type;
  const int64_t M = x.rows, N = gate.rows, K = gate.cols, n = M * N;
  m.wrote(out);
  m.materialize();
  const cuda::DqMmaPlan plan = m.dq_plan(type, M, K, N);
  if (m.dq_swiglu && m.lazy_swiglu && plan.rs == 4 && cuda::dq_tma_swiglu_supports(type, N, K)) {
    return matmul_swiglu_fused(gate, up, x, out);
  }
  // Workspaces first (a reallocation drops a copy that lived there), then x's bf16 copy.
  auto* gu = static_cast<uint8_t*>(m.grow_bf16(m.gu_bf16, size_t(2 * n) * 2, "gate/up activations (bf16)"));
  void* ob = m.grow_bf16(m.act_bf16, size_t(n) * 2, "swiglu activations (bf16)");
  const void *gw = gate.data, *uw = up.data;
  uint8_t* gout = gu;
  uint8_t* uout = gu + n * 2;
  // Round 33: gate and up as whole waves of 256-token tiles and a last wave of 128-token tiles where
  // that fits (dq_tma_wave_split), else one launch each. Not Q8_0: its 128-token stages cost more,
  // and its last wave as 256-token tiles with a 2-way K split measured no faster (calls 5-6); round
  // 37's cheaper Q8_0 fragments left the cut even (58.4-59.0% vs 57.5-59.3% of the GEMM peak at 512
  // rows, three runs each). Not where VELLUM_CUDA_DQ_TMA_BT / _SPLITS (set_dq_tma_plan) force the plan.
  const std::array<cuda::DqSeg, 2> gu_segs = {cuda::DqSeg{type, gw, N, gout, N, nullptr}, cuda::DqSeg{type, uw, N, uout, N, nullptr}};
  const bool cut_ok = m.dq_group && type != TensorType::Q8_0 && m.dq_tma_bt == 0 && m.dq_splits == 0;
  const cuda::DqWaveSplit cut = cut_ok ? cuda::dq_tma_wave_split(gu_segs.data(), 2, K, M, m.sms, true) : cuda::DqWaveSplit{};
  if (cut.main_count > 0) ++m.dq_wave_splits;
  float* ws;
  int32_t* cnt;
  m.dq_scratch(plan, ws, cnt);
  const void* xb = m.bf16_input(x);
  float* od = out.data;
  const bool lazy = m.lazy_swiglu;
  m.graphs.mix(54, type, gw, uw, N, K, M, xb, gu, ob, od, ws, cnt, plan.splits, plan.nt, lazy, cut.main_count);
  m.graphs.run([=, &m] {
    if (cut.main_count > 0) {
      m.launched(cuda::launch_dq_tma_group(cut.main, cut.main_count, K, xb, M, cut.main_plan, nullptr, nullptr, true, m.stream),
                 "dq_tma group kernel (gate/up, whole waves)");
      m.launched(cuda::launch_dq_tma_group(cut.tail, cut.tail_count, K, xb, M, cut.tail_plan, nullptr, nullptr, true, m.stream),
                 "dq_tma group kernel (gate/up, last wave)");
    } else {
      m.launched(cuda::launch_dq_tma_bf16(type, gw, N, K, xb, M, plan, ws, cnt, gout, N, nullptr, m.stream), "dq_tma kernel (gate)");
      m.launched(cuda::launch_dq_tma_bf16(type, uw, N, K, xb, M, plan, ws, cnt, uout, N, nullptr, m.stream), "dq_tma kernel (up)");
    }
    m.launched(cuda::launch_swiglu_bf16(gout, uout, lazy ? nullptr : od, ob, n, m.stream), "swiglu_bf16 kernel");
  });
  m.bf16_of = od;
  m.bf16_elems = n;
  m.bf16_at = ob;
  if (lazy) m.lazy = {od, n, gout, uout};
}

// Round 36: matmul_swiglu_dq's gate and up as one launch of 64-row gate and up tiles side by side
// (the same token tile and K split as its unfused plan, so the same sums), the tile's end writing
// silu(gate)·up in bf16 for the down projection: no gate/up rows written and read back, no SwiGLU
// kernel. Whole waves + a last wave of 128-token tiles where round 33's cut applies. The f32 rows,
// on demand, are those bf16 rows widened (Impl::Lazy::h16).
void CudaBackend::matmul_swiglu_fused(const Weight& gate, const Weight& up, const Tensor& x, Tensor out) {
  Impl& m = *impl_;
  const TensorType type = gate.type;
  const int64_t M = x.rows, N = gate.rows, K = gate.cols, n = M * N;
  const cuda::DqMmaPlan like = m.dq_plan(type, M, K, N);  // the unfused launches' plan: the same sums
  void* ob = m.grow_bf16(m.act_bf16, size_t(n) * 2, "swiglu activations (bf16)");
  const bool split_tail = m.dq_cut_split;
  const bool cut_ok = m.dq_group && (type != TensorType::Q8_0 || split_tail) && m.dq_tma_bt == 0 && m.dq_splits == 0;
  const void *gw = gate.data, *uw = up.data;
  const cuda::DqSwigluCut cut = cut_ok ? cuda::dq_tma_swiglu_cut(type, gw, uw, ob, N, K, M, m.sms, like, split_tail) : cuda::DqSwigluCut{};
  const cuda::DqMmaPlan plan = cuda::dq_tma_swiglu_plan(N, M, like);
  if (cut.main_rows > 0) ++m.dq_wave_splits;
  ++m.dq_swiglu_calls;
  float* ws = nullptr;
  int32_t* cnt = nullptr;
  m.dq_scratch(cut.main_rows == 0 ? plan : cut.tail_plan, ws, cnt);  // the tail's only where split_tail splits it
  const void* xb = m.bf16_input(x);
  m.graphs.mix(66, type, gw, uw, N, K, M, xb, ob, out.data, ws, cnt, plan.splits, plan.nt, cut.main_rows, cut.tail_plan.splits);
  m.graphs.run([=, &m] {
    if (cut.main_rows > 0) {
      const int64_t r = cut.main_rows;
      m.launched(cuda::launch_dq_tma_swiglu(type, gw, uw, r, K, xb, M, cut.main_plan, nullptr, nullptr, ob, N, m.stream),
                 "dq_tma SwiGLU kernel (whole waves)");
      m.launched(cuda::launch_dq_tma_swiglu(type, cut.tail_gate, cut.tail_up, N - r, K, xb, M, cut.tail_plan, ws, cnt, cut.tail_out, N,
                                            m.stream),
                 "dq_tma SwiGLU kernel (last wave)");
    } else {
      m.launched(cuda::launch_dq_tma_swiglu(type, gw, uw, N, K, xb, M, plan, ws, cnt, ob, N, m.stream), "dq_tma SwiGLU kernel");
    }
  });
  m.bf16_of = out.data;
  m.bf16_elems = n;
  m.bf16_at = ob;
  m.lazy = {out.data, n, nullptr, nullptr, ob};
}

// Many rows of F16 weights (round 14): gate and up GEMMs on the weights as stored write f16 (one
// strided-batched call below 1 024 rows when the weights are one stride apart), then one kernel
// writes silu(gate)·up in f32 and its f16 copy for the down projection: the round-7 BF16 path's
// shape without its on-demand f32 rows. Before, F16 took the generic two GEMMs with f32 outputs
// and a separate SwiGLU (F16 prefill 57% of the GEMM peak at 512 tokens against BF16's 63%).
void CudaBackend::matmul_swiglu_rows_f16(const Weight& gate, const Weight& up, const Tensor& x, Tensor out) {
  Impl& m = *impl_;
  const int64_t M = x.rows, N = gate.rows, K = gate.cols, n = M * N;
  m.wrote(out);
  m.materialize();
  auto* gu = static_cast<uint8_t*>(m.grow(m.gu_f16, size_t(2 * n) * 2, "gate/up activations (f16)"));
  void* ob = m.grow(m.act_f16, size_t(n) * 2, "swiglu activations (f16)");
  const void* xh = m.f16_input(x);
  const void *gw = gate.data, *uw = up.data;
  const bool gate_first = reinterpret_cast<uintptr_t>(gw) < reinterpret_cast<uintptr_t>(uw);
  const bool paired = M < 1024 && m.pair_ok(gate_first ? gw : uw, gate_first ? uw : gw);
  uint8_t* gout = gu + (gate_first ? 0 : n * 2);
  uint8_t* uout = gu + (gate_first ? n * 2 : 0);
  float* od = out.data;
  m.graphs.mix(50, gw, uw, N, K, M, xh, gu, ob, od, paired);
  m.graphs.run([=, &m] {
    if (paired) {
      m.gemm_pair(gate_first ? gw : uw, gate_first ? uw : gw, N, K, xh, M, gu, gu + n * 2, CUDA_R_16F, N, CUDA_R_16F);
    } else {
      m.gemm_f16(gw, N, K, xh, M, gout, CUDA_R_16F, N);
      m.gemm_f16(uw, N, K, xh, M, uout, CUDA_R_16F, N);
    }
    m.launched(cuda::launch_swiglu_f16(gout, uout, od, ob, n, m.stream), "swiglu_f16 kernel");
  });
  m.f16_of = od;
  m.f16_elems = n;
  m.f16_at = ob;
}

void CudaBackend::rope_store_kv(uint32_t layer, Tensor q, Tensor k, const Tensor& v, uint32_t head_dim,
                                const RopeConfig& rc) {
  Impl& m = *impl_;
  m.touch({q, k, v}, {q, k});
  m.forget_q8();
  if (!m.rope_store_fits(layer, q, k, v, head_dim, rc)) {
    Backend::rope_store_kv(layer, q, k, v, head_dim, rc);  // rope and store_kv check and name the shapes
    return;
  }
  const auto& s = m.layout.layers[layer];
  const cuda::RopeParams p = rope_params(rc);
  const cuda::KvPoolView view{m.pool, m.block_elems, m.k_off[layer], m.v_off[layer], int(m.layout.block_size),
                              int(s.n_kv_heads), int(s.head_dim_k), m.kv_type, int64_t(m.num_blocks)};
  const int32_t* positions = m.d_positions;
  const int64_t* slots = m.d_slots;
  m.graphs.mix(16, q.data, q.cols, k.data, v.data, q.rows, head_dim, positions, slots, view.pool, view.block_elems,
               int(view.type), view.k_off, view.v_off, view.block_size, view.kv_heads);
  m.graphs.mix_bytes(&p, sizeof p);
  m.graphs.run([=, &m] {
    if (q.rows == 1 && m.skip(2)) return;
    m.launched(cuda::launch_rope_store_kv(q.data, q.cols, k.data, v.data, q.rows, int(head_dim), positions, p, view, slots,
                                          m.stream),
               "rope_store_kv kernel");
  });
}

}  // namespace vellum::backend
