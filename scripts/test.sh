#!/usr/bin/env bash
# Every test, from a fresh clone: set up, build, run the unit and end-to-end tests; then a clang build
# with AddressSanitizer + UndefinedBehaviorSanitizer runs the unit tests again and every libFuzzer
# target for VELLUM_FUZZ_SECONDS (default 60) each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
start=$(date +%s)

echo "== build (gcc, RelWithDebInfo${VELLUM_TEST_NO_CUDA:+, no CUDA})"
scripts/build.sh build ${VELLUM_TEST_NO_CUDA:+-DVELLUM_CUDA=OFF}

echo "== sanitizer + fuzz build (clang, ASan + UBSan, libFuzzer)"
CC=clang CXX=clang++ scripts/build.sh build-san -DVELLUM_CUDA=OFF -DVELLUM_SANITIZE=ON -DVELLUM_FUZZ=ON \
  -DVELLUM_BENCH=OFF -DVELLUM_FUZZ_SECONDS="${VELLUM_FUZZ_SECONDS:-60}"

echo "== unit tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-san -L unit --output-on-failure -j "$(nproc)"

echo "== fuzzing"
ctest --test-dir build-san -L fuzz --output-on-failure

echo "== unit and end-to-end tests"
ctest --test-dir build -L 'unit|py' --output-on-failure -j "$(nproc)"
echo "test.sh: all stages passed in $(( $(date +%s) - start )) s"
