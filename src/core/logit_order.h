#pragma once
// The order of sampling candidates, shared by every backend's top_k_rows and the sampler's sort:
// the larger logit first, the smaller token id on a tie, NaN after every number (a NaN logit is
// never drawn before a real one, and std::sort gets a strict weak order even on broken rows).

#include <cmath>
#include <cstdint>

namespace vellum {

inline bool logit_before(float a, int32_t ia, float b, int32_t ib) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return na == nb ? ia < ib : nb;
  return a > b || (a == b && ia < ib);
}

}  // namespace vellum
