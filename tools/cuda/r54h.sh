#!/usr/bin/env bash
# Round 54, call 9: the review commit's bench parsing (env_counts shared by the aggregate decode bench
# and --plan-bench): plan_bench at 24 rows, and the aggregate decode at 4 sequences after 2 048 tokens.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M
plan_bench 24
seqs review Q4_K_M 4 VELLUM_BENCH_SEQ_CTX=2048
echo "[${SECONDS}s]" >> $S
cat $S
