#!/usr/bin/env bash
# build.sh [DIR] [cmake options…]: configures (once) and builds vellum incrementally. DIR defaults to build/.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$(command -v python3)" "$@"
fi
cmake --build "$dir" -j "$(nproc)"
