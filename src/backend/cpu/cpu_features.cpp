#include "backend/cpu/cpu_features.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define VELLUM_X86 1
#else
#define VELLUM_X86 0
#endif

namespace vellum::backend::cpu {
namespace {

#if VELLUM_X86
uint64_t xgetbv0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#if VELLUM_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
  f.fma = (c >> 12) & 1;
  f.f16c = (c >> 29) & 1;
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = xgetbv0();
  f.os_ymm = (xcr0 & 0x6) == 0x6;             // SSE and AVX state
  f.os_zmm = f.os_ymm && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = (b >> 5) & 1;
    f.avx512f = (b >> 16) & 1;
    f.avx512bw = (b >> 30) & 1;
    f.avx512vl = (b >> 31) & 1;
    f.avx512vnni = (c >> 11) & 1;
    if (a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512bf16 = (a >> 5) & 1;
  }
#endif
  return f;
}

IsaLevel detect_level(const CpuFeatures& f) {
  if (!(f.os_ymm && f.avx2 && f.fma && f.f16c)) return IsaLevel::Scalar;
  if (f.os_zmm && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni) return IsaLevel::Avx512;
  return IsaLevel::Avx2;
}

std::optional<IsaLevel> env_limit() {
  const char* v = std::getenv("VELLUM_CPU_ISA");
  if (v == nullptr || *v == '\0') return std::nullopt;
  return parse_isa(v);
}

std::atomic<int> g_limit{-1};

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

IsaLevel detected_isa() {
  static const IsaLevel level = detect_level(cpu_features());
  return level;
}

IsaLevel active_isa() {
  static const std::optional<IsaLevel> env = env_limit();
  int level = static_cast<int>(detected_isa());
  if (env) level = std::min(level, static_cast<int>(*env));
  const int limit = g_limit.load(std::memory_order_relaxed);
  if (limit >= 0) level = std::min(level, limit);
  return static_cast<IsaLevel>(level);
}

void set_isa_limit(std::optional<IsaLevel> limit) {
  g_limit.store(limit ? static_cast<int>(*limit) : -1, std::memory_order_relaxed);
}

std::string_view isa_name(IsaLevel level) {
  switch (level) {
    case IsaLevel::Scalar: return "scalar";
    case IsaLevel::Avx2: return "avx2";
    case IsaLevel::Avx512: return "avx512";
  }
  return "?";
}

std::optional<IsaLevel> parse_isa(std::string_view name) {
  std::string s;
  for (char ch : name) s += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  if (s == "scalar" || s == "generic") return IsaLevel::Scalar;
  if (s == "avx2") return IsaLevel::Avx2;
  if (s == "avx512" || s == "avx-512") return IsaLevel::Avx512;
  return std::nullopt;
}

}  // namespace vellum::backend::cpu
