#!/usr/bin/env bash
# Round 28, call 16: --dq-only after the many-row SwiGLU on the register-A kernel was limited to
# gate/up heights that are multiples of 8 (the bf16 SwiGLU's 16-byte pieces); a 1 004-row case
# checks the fallback.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
dq_checks "swiglu .* 1004x"
