#include "core/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace vellum {
namespace {

// A few microseconds of polling before sleeping on a condition variable: enough to catch the other
// threads of a balanced fork, short enough not to starve them when the machine is oversubscribed.
constexpr int kSpins = 100;  // PAUSE is ~140 cycles on recent Intel cores

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t, unsigned)>& fn, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t threads = static_cast<int64_t>(size());
  int64_t chunk = (n + threads - 1) / threads;
  chunk = (chunk + grain - 1) / grain * grain;
  if (workers_.empty() || chunk >= n) {
    fn(0, n, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    job_chunk_ = chunk;
    pending_.store(static_cast<unsigned>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_cv_.notify_all();
  fn(0, std::min(chunk, n), 0);
  for (int i = 0; i < kSpins && pending_.load(std::memory_order_acquire) != 0; ++i) cpu_relax();
  if (pending_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
  }
  std::lock_guard<std::mutex> lock(mutex_);
  job_ = nullptr;
}

void ThreadPool::worker_loop(unsigned index) {
  uint64_t seen = 0;
  for (;;) {
    for (int i = 0; i < kSpins && generation_.load(std::memory_order_acquire) == seen &&
                    !stop_.load(std::memory_order_acquire);
         ++i) {
      cpu_relax();
    }
    const std::function<void(int64_t, int64_t, unsigned)>* job;
    int64_t begin, end;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] {
        return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen;
      });
      if (stop_.load(std::memory_order_acquire)) return;
      seen = generation_.load(std::memory_order_acquire);
      job = job_;
      begin = std::min<int64_t>(job_n_, job_chunk_ * index);
      end = std::min<int64_t>(job_n_, begin + job_chunk_);
    }
    if (begin < end) (*job)(begin, end, index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

}  // namespace vellum
