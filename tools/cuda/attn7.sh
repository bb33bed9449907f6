#!/usr/bin/env bash
# Round-7 decode-attention device run (one call). Copy next to stripped `vellum`, `vellum_cuda_check`,
# lib/, fixtures/, run5.sh and stories_greedy.py (a .devcarry folder). Logs and tables go to $OUT.
#   attn7.sh [checks] [attn] [model]   (default: all three, in that order)
#   checks: run5.sh checks (op checks incl. the spans-per-block bit check, stories260K greedy,
#           graphs bit identity, qwen2.5-0.5b CPU vs GPU);
#   attn:   vellum_cuda_check --only-bench --attn-bench (round 7 default, round-5 kernel, 3 stages);
#   model:  synthetic llama3-8b BF16: graphs vs eager, then the model timings with round 7's kernel
#           and with round 5's (VELLUM_CUDA_ATTN_DECODE=1), same process image, same machine.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
STEPS=${*:-checks attn model}
for S in $STEPS; do
  T0=$SECONDS
  case $S in
    checks) timeout 130 bash "$D/run5.sh" checks > "$O/checks.txt" 2>&1; echo "checks exit $? $((SECONDS - T0)) s" ;;
    attn) timeout 90 "$C" --only-bench --attn-bench > "$O/attn-bench.txt" 2> "$O/attn-bench.log"; echo "attn bench exit $? $((SECONDS - T0)) s" ;;
    model)
      "$V" gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b.gguf > /dev/null 2>&1
      timeout 70 "$C" --graphs /tmp/l8b.gguf --only-bench --skip-op-bench --model /tmp/l8b.gguf > "$O/model-r7.txt" 2> "$O/model-r7.log"
      echo "model r7 exit $? $((SECONDS - T0)) s"
      VELLUM_CUDA_ATTN_DECODE=1 timeout 60 "$C" --only-bench --skip-op-bench --model /tmp/l8b.gguf > "$O/model-r5.txt" 2> "$O/model-r5.log"
      echo "model r5 exit $? $((SECONDS - T0)) s" ;;
  esac
done
# $OUT brings back at most 8 files: everything goes into one archive, the short table is printed below.
tar czf /tmp/attn7-out.tgz -C "$O" . && rm -f "$O"/* && mv /tmp/attn7-out.tgz "$O/all.tgz" && mkdir -p /tmp/ox && tar xzf "$O/all.tgz" -C /tmp/ox
O=/tmp/ox
echo "===== summary"
[ -f "$O/checks.txt" ] && grep -E "FAIL|checks,|greedy|graphs|identical|match" "$O/checks.txt" | head -20
[ -f "$O/checks.txt" ] && grep -E "attention.*(decode|split path)" "$O"/check_table.txt 2>/dev/null | cut -c1-110
[ -f "$O/attn-bench.txt" ] && grep -E "paged decode|device copy" "$O/attn-bench.txt"
for f in model-r7 model-r5; do [ -f "$O/$f.txt" ] && { echo "-- $f"; grep -E "graphs vs eager|decode .* seqs|copy" "$O/$f.txt" | grep -v "all logits"; }; done
