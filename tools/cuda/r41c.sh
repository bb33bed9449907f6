#!/usr/bin/env bash
# Round 41, call 3: gemv_mma v2 (weights staged per warp by cp.async, contiguous x loads). (1) The
# kernel alone against the rows GEMV and mmq; (2) --dq-only (check_matmul's mode 8 at 2 rows among
# the quantized many-row checks); graphs vs eager on llama3.2-1b Q4_K_M and Q8_0 (4-row steps take
# the kernel); (3) llama3-8b Q4_K_M and Q8_0 quick bench with VELLUM_CUDA_GEMV_MMA = 1 / 0, twice,
# alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1
  "$D/vellum" gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1; done) &
VELLUM_BENCH_MMA_ONLY=1 timeout 200 $C --only-bench --gemv-only > /tmp/mma.txt 2>/dev/null
echo "mma bench exit $?" >> $S
grep -E "^gemv mma" /tmp/mma.txt | sed -E 's/ of copy bw//' >> $S
left bench done
dq_checks "int8 mma rows" >> $S
left dq done
wait
for T in Q4_K_M Q8_0; do
  echo "$T graphs: $(timeout 200 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-220 | tr '\n' ' ')" >> $S
done
left graphs done
for i in 1 2; do for T in Q4_K_M Q8_0; do for M in 1 0; do q mma$M-$i $T VELLUM_CUDA_GEMV_MMA=$M; done; done; done
cat $O/quick.txt >> $S
left quick done
cat $S
