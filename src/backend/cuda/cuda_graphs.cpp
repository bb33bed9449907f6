#include "backend/cuda/cuda_graphs.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <unordered_set>

#include "backend/cuda/cuda_util.h"
#include "backend/cuda/launch.h"

namespace vellum::cuda {

namespace {
std::mutex g_full_mu;
std::unordered_set<const void*> g_full;  // keep_full_dependency
// VELLUM_CUDA_PDL=2 (measurement): programmatic edges into those kernels too.
const bool g_pdl_into_persistent = [] {
  const char* e = std::getenv("VELLUM_CUDA_PDL");
  return e != nullptr && std::string(e) == "2";
}();

bool is_kernel(cudaGraphNode_t node) {
  cudaGraphNodeType type{};
  return cudaGraphNodeGetType(node, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel;
}

// This backend's kernels (namespace vellum::cuda) all call pdl_wait() first (pdl.cuh); cuBLAS's do
// not, so an edge into one of them stays a full dependency, as does one into a kernel registered
// with keep_full_dependency.
bool waits_programmatically(cudaGraphNode_t node) {
  if (!is_kernel(node)) return false;
  cudaKernelNodeParams params{};
  const char* name = nullptr;
  if (cudaGraphKernelNodeGetParams(node, &params) != cudaSuccess || params.func == nullptr) return false;
  if (cudaFuncGetName(&name, params.func) != cudaSuccess || name == nullptr) return false;
  if (std::strstr(name, "vellum") == nullptr) return false;
  const std::lock_guard<std::mutex> lock(g_full_mu);
  return g_pdl_into_persistent || g_full.count(params.func) == 0;
}

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

void keep_full_dependency(const void* kernel) {
  const std::lock_guard<std::mutex> lock(g_full_mu);
  g_full.insert(kernel);
}

namespace {
bool eager_default() {
  for (const char* name : {"VELLUM_CUDA_EAGER_PDL", "VELLUM_CUDA_PDL"}) {
    const char* e = std::getenv(name);
    if (e != nullptr && std::string(e) == "0") return false;
  }
  int dev = 0, major = 0;
  return cudaGetDevice(&dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 9;
}
}  // namespace

bool launch_programmatically(const void* kernel, cudaStream_t stream) {
  static const bool eager = eager_default();  // the first launch's device and environment
  if (!eager) return false;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess || capturing != cudaStreamCaptureStatusNone) return false;
  const std::lock_guard<std::mutex> lock(g_full_mu);
  return g_full.count(kernel) == 0;
}

StepGraphs::~StepGraphs() { clear(); }

void StepGraphs::clear() {
  for (auto& [fp, e] : graphs_) {
    if (e.exec != nullptr) (void)cudaGraphExecDestroy(e.exec);
  }
  graphs_.clear();
  last_fp_.clear();
}

void StepGraphs::evict_least_recent() {
  auto oldest = std::min_element(graphs_.begin(), graphs_.end(),
                                 [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; });
  if (oldest == graphs_.end()) return;
  // One still in flight is freed when its launch completes (cudaGraphExecDestroy's contract).
  if (oldest->second.exec != nullptr) (void)cudaGraphExecDestroy(oldest->second.exec);
  graphs_.erase(oldest);
  ++evictions;
}

void StepGraphs::set_programmatic(bool on) {
  flush();
  if (on == programmatic) return;
  programmatic = on;
  clear();
  warm_.clear();
}

void StepGraphs::mix_u64(uint64_t v) { fp_ = splitmix(fp_ ^ v); }

void StepGraphs::mix_bytes(const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t u = 0;
    std::memcpy(&u, b + i, std::min<size_t>(8, n - i));
    mix_u64(u);
  }
}

void StepGraphs::begin(uint64_t cls) {
  flush();
  early_fp_ = 0;
  early_stale_ = false;
  if (!enabled) return;
  cls_ = cls;
  fp_ = splitmix(cls);
  recording_ = !warm_.insert(cls).second;
}

bool StepGraphs::launch_early(cudaStream_t stream) {
  if (!recording_) return false;
  const auto last = last_fp_.find(cls_);
  if (last == last_fp_.end() || !last->second.repeated) return false;
  const auto it = graphs_.find(last->second.last_fp);
  if (it == graphs_.end() || it->second.exec == nullptr || it->second.epoch != free_epoch()) return false;
  if (cudaGraphLaunch(it->second.exec, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  early_fp_ = last->second.last_fp;
  return true;
}

void StepGraphs::flush() {
  if (!recording_) return;
  recording_ = false;
  if (early_fp_ != 0) ++early_misses;  // the ops run now, after the early graph
  early_fp_ = 0;
  std::vector<std::function<void()>> ops = std::move(ops_);
  ops_.clear();
  for (auto& f : ops) f();
}

cudaGraphExec_t StepGraphs::capture(cudaStream_t stream) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  bool ok = true;
  capturing_ = true;
  try {
    for (auto& f : ops_) f();
  } catch (const std::exception&) {
    ok = false;  // an op the capture refused: the step runs eagerly below
  }
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  ok = cudaStreamEndCapture(stream, &graph) == cudaSuccess && ok && graph != nullptr;
  if (ok && programmatic) ok = make_edges_programmatic(graph);
  cudaGraphExec_t exec = nullptr;
  if (ok && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) exec = nullptr;
  if (graph != nullptr) (void)cudaGraphDestroy(graph);
  (void)cudaGetLastError();  // a refused capture's error must not surface in a later check()
  return exec;
}

// Every kernel -> kernel edge whose downstream kernel is ours starts that kernel once all blocks of
// the upstream one have started (the launch-completion port); the kernel's pdl_wait() then holds
// it until the upstream grid has finished and its writes are visible.
bool StepGraphs::make_edges_programmatic(cudaGraph_t graph) {
  size_t n = 0;
  if (cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &n) != cudaSuccess) return false;
  std::vector<cudaGraphNode_t> from(n), to(n);
  std::vector<cudaGraphEdgeData> data(n);
  if (n != 0 && cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &n) != cudaSuccess) return false;
  for (size_t i = 0; i < n; ++i) {
    if (data[i].type != cudaGraphDependencyTypeDefault || data[i].from_port != cudaGraphKernelNodePortDefault) continue;
    if (!is_kernel(from[i]) || !waits_programmatically(to[i])) continue;
    cudaGraphEdgeData pdl{};
    pdl.from_port = cudaGraphKernelNodePortLaunchCompletion;
    pdl.type = cudaGraphDependencyTypeProgrammatic;
    if (cudaGraphRemoveDependencies(graph, &from[i], &to[i], &data[i], 1) != cudaSuccess) return false;
    if (cudaGraphAddDependencies(graph, &from[i], &to[i], &pdl, 1) != cudaSuccess) return false;
    ++programmatic_edges;
  }
  return true;
}

void StepGraphs::finish(cudaStream_t stream) {
  if (!recording_) return;
  const uint64_t early = early_fp_;
  early_fp_ = 0;
  if (early != 0 && early == fp_ && !early_stale_) {  // the early graph was this step's: done
    recording_ = false;
    ops_.clear();
    auto& e = graphs_.at(fp_);
    e.last_use = ++uses_;
    e.epoch = free_epoch();
    ++early_hits;
    ++replays;
    return;
  }
  if (early != 0) ++early_misses;
  auto it = graphs_.find(fp_);
  if (it == graphs_.end()) {
    if (graphs_.size() >= kMaxGraphs) evict_least_recent();
    const auto t0 = std::chrono::steady_clock::now();
    cudaGraphExec_t exec = capture(stream);
    capture_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    captures += exec != nullptr ? 1 : 0;
    it = graphs_.emplace(fp_, Entry{exec, 0, 0}).first;
  }
  it->second.last_use = ++uses_;
  if (it->second.exec != nullptr) {
    recording_ = false;
    ops_.clear();
    check(cudaGraphLaunch(it->second.exec, stream), "cudaGraphLaunch");
    it->second.epoch = free_epoch();
    ClassState& c = last_fp_[cls_];
    c.repeated = c.last_fp == fp_;
    c.last_fp = fp_;
    ++replays;
  } else {
    ++eager_fallbacks;
    last_fp_.erase(cls_);
    flush();
  }
}

}  // namespace vellum::cuda
