// The chain trace's registry of translation units (chain_trace.h): compiled into builds with
// VELLUM_CHAIN_TRACE only.

#if defined(VELLUM_CHAIN_TRACE)
#include "backend/cuda/chain_trace.h"

#include <mutex>
#include <vector>

namespace vellum::cuda {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<ChainTraceSetter>& registry() {  // a function's static: the setters register during static init
  static std::vector<ChainTraceSetter> setters;
  return setters;
}

}  // namespace

bool chain_trace_register(ChainTraceSetter set) {
  const std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(set);
  return true;
}

void chain_trace_attach(const ChainTrace& trace) {
  const std::lock_guard<std::mutex> lock(registry_mutex());
  for (ChainTraceSetter set : registry()) set(trace);
}

}  // namespace vellum::cuda

#endif  // VELLUM_CHAIN_TRACE
