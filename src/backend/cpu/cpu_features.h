#pragma once
// Which SIMD instruction sets the CPU kernels may use, decided at run time. A level is usable only
// when CPUID reports the instructions *and* XGETBV says the OS saves the register state they need
// (YMM for AVX2; opmask and all of ZMM for AVX-512), so a CPU that reports AMX or AVX-512 but runs
// under an OS or hypervisor that does not enable it falls back cleanly. AMX is never used.
//
// The active level is the detected one, lowered by the environment variable VELLUM_CPU_ISA
// (scalar | avx2 | avx512) or by set_isa_limit() (tests use it to run every path on one machine).
// Asking for more than the CPU has gives the detected level.

#include <optional>
#include <string_view>

namespace vellum::backend::cpu {

enum class IsaLevel : int {
  Scalar = 0,  // portable C++
  Avx2 = 1,    // AVX2 + FMA + F16C
  Avx512 = 2,  // AVX-512 F/BW/VL + VNNI (+ BF16 where present)
};

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false, avx512bf16 = false;
  bool os_ymm = false, os_zmm = false;  // XGETBV: the OS saves YMM / opmask+ZMM state
};

const CpuFeatures& cpu_features();
// The best level this CPU and OS support.
IsaLevel detected_isa();
// The level kernels use now: min(detected, VELLUM_CPU_ISA, set_isa_limit()).
IsaLevel active_isa();
// Caps the active level (nullopt: no cap beyond the environment). Not thread-safe against running
// kernels: call it between matmuls.
void set_isa_limit(std::optional<IsaLevel> limit);

std::string_view isa_name(IsaLevel level);
std::optional<IsaLevel> parse_isa(std::string_view name);

}  // namespace vellum::backend::cpu
