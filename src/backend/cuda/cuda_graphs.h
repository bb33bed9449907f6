#pragma once
// CUDA graphs for decode steps (issue #9 item 4). While a decode-only step is recorded, each op
// checks its arguments as usual but, instead of launching, stores a closure and folds every launch
// argument (pointers, sizes, the padded attention split count) into a 64-bit fingerprint. At the
// step's end the fingerprint picks a graph captured from the same closures earlier, replayed with
// one cudaGraphLaunch; a new fingerprint is captured then replayed. A graph depends only on its
// launch arguments, and the step's varying data (tokens, positions, slots, block tables) sits in
// fixed device buffers uploaded before the launch, so equal fingerprints mean an equal step.
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
  // Ends a recorded step on `stream`: launches its graph (captured first when the fingerprint is
  // new); a step whose capture fails runs its ops eagerly. Nothing when not recording.
  void finish(cudaStream_t stream);
  // Runs the stored ops eagerly and leaves recording (e.g. a workspace must grow mid-step).
  void flush();

  int64_t captures = 0, replays = 0, eager_fallbacks = 0;  // for the check and the benchmark
  int64_t programmatic_edges = 0;                         // edges made programmatic, all captures
  int64_t evictions = 0;                                  // graphs dropped to make room
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
  };
  void evict_least_recent();
  bool recording_ = false, capturing_ = false;
  uint64_t fp_ = 0, uses_ = 0;
  std::vector<std::function<void()>> ops_;
  std::unordered_set<uint64_t> warm_;          // classes that ran once eagerly
  std::unordered_map<uint64_t, Entry> graphs_;  // by fingerprint
};

}  // namespace vellum::cuda
