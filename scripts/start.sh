#!/usr/bin/env bash
# The main job, from a fresh clone: set up, build, and run the most complete thing vellum does today:
# convert the real stories260K llama2.c model to GGUF, inspect it, and generate text with it on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
fixtures=${VELLUM_FIXTURES:-../shared/fixtures}
mkdir -p models
./build/vellum gguf convert-llama2c "$fixtures/stories260K/stories260K.bin" "$fixtures/stories260K/tok512.bin" \
  models/stories260K.gguf
./build/vellum gguf info models/stories260K.gguf | tail -n 4
./build/vellum run -m models/stories260K.gguf -p "${VELLUM_PROMPT:-Once upon a time}" -n 200 --temp 0
