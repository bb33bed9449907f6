#pragma once
// CUDA graphs for decode steps (issue #9 item 4). While a decode-only step is recorded, each op
// checks its arguments as usual but, instead of launching, stores a closure and folds every launch
// argument (pointers, sizes, the padded attention split count) into a 64-bit fingerprint. At the
// step's end the fingerprint picks a graph captured from the same closures earlier, replayed with
// one cudaGraphLaunch; a new fingerprint is captured then replayed. A graph depends only on its
// launch arguments, and the step's varying data (tokens, positions, slots, block tables) sits in
// fixed device buffers uploaded before the launch, so equal fingerprints mean an equal step.
//
// Early launch (round 20): recording a step costs the host ~0.3 ms at batch 1 (≈300 ops), time in
// which the device would idle. A decode step repeats the previous step of its class, so begin()'s
// caller may launch that step's graph at once (launch_early; only after the class's last two steps
// replayed the same graph) and record meanwhile; finish() then
// only checks that the fingerprint came out the same. When it does not (a different end of step,
// a workspace that moved), the early graph's work is simply done again by the right graph: a decode
// step is idempotent (it rewrites the same K/V slots and recomputes everything else from the
// step's inputs). The early graph must not touch freed memory: only a graph whose fingerprint was
// matched since the last device free (free_epoch(), cuda_util.h) is launched early.
// Host-only: compiled with the CUDA toolkit (VELLUM_HAVE_CUDA); see docs/cuda.md.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace vellum::cuda {

class StepGraphs {
 public:
  StepGraphs() = default;
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  bool enabled = true;  // VELLUM_CUDA_GRAPHS=0 / CudaBackend::set_cuda_graphs(false): always eager
  // Kernel-to-kernel edges of a captured graph become programmatic (pdl.cuh) when the next kernel is
  // this backend's: VELLUM_CUDA_PDL=0 / CudaBackend::set_programmatic_launch(false) turns it off.
  bool programmatic = true;
  void set_programmatic(bool on);  // drops the graphs captured the other way

  // Starts a decode step of class `cls` (batch size and attention splits). The first step of a class
  // runs eagerly (it sizes every workspace, so no capture allocates); later ones are recorded.
  void begin(uint64_t cls);
  bool recording() const { return recording_; }
  // True while a recorded step's ops run under stream capture (they must not depend on host state
  // that changes between replays).
  bool capturing() const { return capturing_; }
  // Folds launch arguments (integers, enums, floats, pointers) into the step's fingerprint.
  template <class... A>
  void mix(const A&... a) {
    (mix_one(a), ...);
  }
  void mix_bytes(const void* p, size_t n);
  // Runs `f` now, or stores it while the step is recorded.
  template <class F>
  void run(F&& f) {
    if (recording_) {
      ops_.emplace_back(std::forward<F>(f));
    } else {
      f();
    }
  }
  // Right after begin() of a recorded step: launches on `stream` the graph that the class's last
  // step replayed, if its pointers are still live (no device free since its fingerprint was last
  // matched); finish() checks the guess. Returns whether it launched.
  bool launch_early(cudaStream_t stream);
  // Host data that the early graph may have read stale changed (an upload during the step): the
  // step's own graph runs at finish() even when the fingerprints match.
  void early_input_changed() { early_stale_ = true; }
  // Ends a recorded step on `stream`: launches its graph (captured first when the fingerprint is
  // new); a step whose capture fails runs its ops eagerly. Nothing when not recording, and no
  // launch when launch_early already ran this very graph.
  void finish(cudaStream_t stream);
  // Runs the stored ops eagerly and leaves recording (e.g. a workspace must grow mid-step).
  void flush();

  int64_t captures = 0, replays = 0, eager_fallbacks = 0;  // for the check and the benchmark
  int64_t programmatic_edges = 0;                         // edges made programmatic, all captures
  int64_t evictions = 0;                                  // graphs dropped to make room
  int64_t early_hits = 0, early_misses = 0;               // launch_early's guesses: right, done again
  double capture_seconds = 0;                             // host time in capture + instantiate

 private:
  template <class T>
  void mix_one(const T& v) {
    if constexpr (std::is_pointer_v<T>) {
      mix_u64(reinterpret_cast<uintptr_t>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      uint64_t u = 0;
      std::memcpy(&u, &v, sizeof v);
      mix_u64(u);
    } else {
      mix_u64(static_cast<uint64_t>(v));
    }
  }
  void mix_u64(uint64_t v);
  cudaGraphExec_t capture(cudaStream_t stream);
  bool make_edges_programmatic(cudaGraph_t graph);
  void clear();

  // Graphs kept; a new one then replaces the least recently replayed (a server's batch size drifts,
  // so old sizes stop coming back while the current ones keep theirs).
  static constexpr size_t kMaxGraphs = 64;
  struct Entry {
    cudaGraphExec_t exec = nullptr;  // nullptr: capture failed, run eagerly
    uint64_t last_use = 0;
    uint64_t epoch = 0;  // free_epoch() when its fingerprint was last matched
  };
  void evict_least_recent();
  bool recording_ = false, capturing_ = false, early_stale_ = false;
  uint64_t fp_ = 0, uses_ = 0, cls_ = 0, early_fp_ = 0;
  // Per class: the fingerprint its last step replayed, and whether the step before had it too. Only
  // a repeated fingerprint is launched early, so steps whose end keeps changing (greedy and sampled
  // requests coming and going) are not computed twice each.
  struct ClassState {
    uint64_t last_fp = 0;
    bool repeated = false;
  };
  std::unordered_map<uint64_t, ClassState> last_fp_;
  std::vector<std::function<void()>> ops_;
  std::unordered_set<uint64_t> warm_;          // classes that ran once eagerly
  std::unordered_map<uint64_t, Entry> graphs_;  // by fingerprint
};

}  // namespace vellum::cuda
