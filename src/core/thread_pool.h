#pragma once
// A fork-join thread pool for data-parallel kernels. parallel_for splits [0, n) into contiguous
// chunks, one per worker, and returns when all are done. Work assignment never changes what a
// kernel computes: each output element is produced entirely by one thread in a fixed order, so
// results are identical for any thread count (DESIGN.md, batch invariance).
//
// Fork and join first spin briefly on atomics (a decode step forks a few hundred times, and a
// futex wake-up costs more than the work of a small op), then block on condition variables.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vellum {

class ThreadPool {
 public:
  // `threads` workers in total, the calling thread included (0: hardware concurrency).
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls fn(begin, end, thread_index) on disjoint chunks covering [0, n). Chunks are multiples of
  // `grain` (except the last) so callers can keep SIMD-friendly boundaries.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t, unsigned)>& fn, int64_t grain = 1);

 private:
  void worker_loop(unsigned index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  // Written under mutex_ before generation_ is bumped (release); workers read them after seeing
  // the new generation (acquire). The next job cannot start before every worker is done (pending_).
  const std::function<void(int64_t, int64_t, unsigned)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<unsigned> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace vellum
