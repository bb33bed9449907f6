#!/usr/bin/env bash
# Round 51, call 3: the tiled rows kernel alone (bench_gemv_mma: x loaded vs staged, mmq) at 8 / 16
# / 32 rows by launch shape (VELLUM_CUDA_MMA_SHAPE, KW·10 + S), llama3-8b's four shapes, three types.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
for R in 8 16 32; do
  for SH in 0 41 42 81 82 161; do
    VELLUM_CUDA_MMA_SHAPE=$SH VELLUM_BENCH_MMA_ROWS=$R VELLUM_BENCH_MMA_ONLY=1 timeout 100 $C --only-bench --gemv-only > $O/b-$R-$SH.txt 2>&1
    grep -E "^gemv mma" $O/b-$R-$SH.txt | awk '!s[$0]++' | sed -E 's/gemv mma ([^ ]+) ([0-9x]+) at ([0-9]+) rows: ([0-9.]+) us \(([0-9]+)%.*x staged ([0-9.]+) us \(([0-9]+)%, ([0-9]+) outputs differ\) \| rows GEMV ([^|]*)\| mmq ([0-9.]+) us \(([0-9]+)%\) \| max [^ ]+ - ([a-z]+)\| \/ max \|[a-z]+\| ([^ ]+).*/'"shape $SH"' \1 \2 m=\3: loaded \4 (\5%) staged \6 (\7%, \8 differ) mmq \10 (\11%) vs \12 \13/' >> $S
  done
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz b-*.txt && rm -f b-*.txt
cat $S
