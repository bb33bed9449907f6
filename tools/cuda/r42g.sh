#!/usr/bin/env bash
# Round 42, call 7: gemv_mma with a super-block's first x fragments, scale pairs and minimums loaded
# one super-block ahead, 64 registers (32 warps an SM): --dq-only (mode 8 at every launch shape,
# run twice bit for bit); graphs vs eager on llama3.2-1b Q4_K_M; the kernel alone at 8 rows; the
# quick bench of llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "int8 mma rows" > $O/dq.txt 2>&1; grep -vE "PASS" $O/dq.txt | head -20 >> $S; echo "mma rows PASS lines: $(grep "int8 mma rows" $O/dq-check.txt | grep -c PASS)" >> $S
left dq done
VELLUM_BENCH_MMA_ROWS=8 VELLUM_BENCH_MMA_ONLY=1 timeout 100 $C --only-bench --gemv-only > /tmp/mb.txt 2>&1
grep 'gemv mma' /tmp/mb.txt | sort -u | sed -E 's/ \| mmq [0-9.]+ us \([0-9]+%\)//' | cut -c1-170 >> $S
left bench done
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
echo "Q4_K_M graphs: $(timeout 100 $C --graphs /tmp/p4.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-200 | head -1)" >> $S
wait
q default Q4_K_M; q default Q8_0
cat $O/quick.txt >> $S
left quick done
rm -f $O/quick-*.log $O/dq.txt
cat $S
