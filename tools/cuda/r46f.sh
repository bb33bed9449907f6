#!/usr/bin/env bash
# Round 46, call 6: the final main on the GPU: run5.sh's checks (every op against the CPU, stories260K
# greedy, graphs vs eager, CPU vs GPU greedy on qwen2.5-0.5b F16) and batch invariance, nothing
# synthesized beside them (round 45's 480 s check ran out with three models being written).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
bash $D/run5.sh checks > $O/run5.txt 2>&1
timeout 60 $C --invariance /tmp/q.gguf 2>$O/inv.log | grep -E "invarian|checks," > $O/inv.txt
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "op check exit|checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-240;
  cat $O/inv.txt; echo "[${SECONDS}s] done"; } > $S
cat $S
