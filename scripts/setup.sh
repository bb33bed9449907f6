#!/usr/bin/env bash
# Installs everything vellum's build and tests need, from Debian packages and PyPI. Idempotent:
# a second run installs nothing and takes a second. The CUDA toolkit is optional (the CUDA backend
# builds when nvcc is found, on PATH or in /usr/local/cuda/bin).
set -euo pipefail
cd "$(dirname "$0")/.."

debian_packages=(
  build-essential cmake ninja-build pkg-config ccache git
  clang libclang-rt-14-dev            # libFuzzer and the sanitizer runtimes for the fuzz build
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libpcre2-dev libxxhash-dev libcpp-httplib-dev
  python3 python3-pip python3-venv
  gnuplot-nox                         # vellum bench --plot
)

missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python packages for the tests and tools (the gguf package is the independent GGUF reference).
python_bin=$(command -v python3)
has_cuobjdump='import nvidia, pathlib; assert [p for b in nvidia.__path__ for p in pathlib.Path(b).glob("cu*/bin/cuobjdump")]; assert [p for b in nvidia.__path__ for p in pathlib.Path(b).glob("cu*/bin/nvdisasm")]'
if ! "$python_bin" -c "import gguf, numpy, pytest, openai, prometheus_client" 2>/dev/null ||
   ! "$python_bin" -c "$has_cuobjdump" 2>/dev/null; then
  echo "setup: installing Python packages from tests/requirements.txt"
  "$python_bin" -m pip install -q --disable-pip-version-check -r tests/requirements.txt 2>/dev/null ||
    "$python_bin" -m pip install -q --disable-pip-version-check --break-system-packages -r tests/requirements.txt
fi
echo "setup: done"
