D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum_cuda_check.gz; chmod +x $D/vellum_cuda_check
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
timeout 120 $C --cluster-bench 2>&1 | grep "^dq_tma"
echo "== DBG 64 (barriers only)"
VELLUM_CUDA_DQ_TMA_DBG=64 timeout 120 $C --cluster-bench 2>&1 | grep "^dq_tma"
