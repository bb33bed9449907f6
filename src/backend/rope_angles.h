#pragma once
// RoPE's per-frequency angles from a RopeConfig, computed once per step on the host in double for
// every backend, so that the CPU and GPU rotate by the same angles.

#include <vector>

#include "backend/rope_config.h"

namespace vellum::backend {

// Per-frequency rotation angles at one position, and the cos/sin magnitude (YaRN scales it).
struct RopeAngles {
  std::vector<double> inv_freq;  // radians per position for each rotated pair
  double magnitude = 1.0;
};

RopeAngles rope_angles(const RopeConfig& rope);

}  // namespace vellum::backend
