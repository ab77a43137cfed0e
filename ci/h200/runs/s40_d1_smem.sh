#!/usr/bin/env bash
# Session 40, device call 1: is the 128x192 tile's K loop bound by shared-memory bandwidth?
# ncu (default fixed clock) of the shipped CLI and of DeepGEMM at 4096x2112 with K = 3584, 7168,
# 14336 (the slope is the K loop's cost per block, the intercept the tile edges), and at
# 4096x4096x7168; cycles, instructions, shared-memory bank reads/writes (and their peak per
# cycle), tensor-pipe activity where ncu names such metrics.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT/r; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
xz -dkf .devx/s40/blockfp8.xz && chmod +x .devx/s40/blockfp8; CLI=.devx/s40/blockfp8
$NCU --query-metrics --chip gh100 > $R/query_all.txt 2>&1
grep -E -i "bank|gmma|tensor|mem_shared|shared" $R/query_all.txt > $R/query.txt
want=""
for m in l1tex__data_bank_reads l1tex__data_bank_writes l1tex__data_pipe_lsu_wavefronts_mem_shared \
         sm__pipe_tensor_op_gmma_cycles_active sm__inst_executed_pipe_tensor_op_gmma \
         smsp__inst_executed_pipe_tensor_op_gmma sm__pipe_shared_cycles_active l1tex__data_pipe_tma_wavefronts; do
  if grep -q "^$m " $R/query_all.txt; then want="$want,$m.sum,$m.sum.peak_sustained,$m.sum.pct_of_peak_sustained_elapsed"; fi
done
MET="gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max,smsp__inst_executed.sum$want"
echo "$MET" > $R/metrics.txt
(bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$?" >> $R/dg_build.log) &
bpid=$!
shapes="4096,2112,7168 4096,2112,14336 4096,2112,3584 4096,4096,7168"
for s in $shapes; do
  t=${s//,/x}
  timeout 150 $NCU --metrics "$MET" --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 2 \
    $CLI bench --backend cuda --mnk $s --scale-layout column-major --config-dir .devx/s40/cfg --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress \
    > $R/ours_$t.csv 2> $R/ours_$t.err
  echo "ours $s rc=$?"
done
wait $bpid; cat $R/dg_build.log | tail -2
export PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} DG_PRINT_CONFIGS=1
for s in $shapes; do python3 ci/h200/deepgemm_time.py --warm $s > $R/dgwarm_${s//,/x}.log 2>&1 & done; wait
for s in $shapes; do
  t=${s//,/x}
  timeout 150 $NCU --metrics "$MET" --csv --kernel-name "regex:fp8_gemm|sm90_fp8" --launch-count 1 \
    python3 ci/h200/deepgemm_time.py --warm $s > $R/dg_$t.csv 2> $R/dg_$t.err
  echo "dg $s rc=$?"
done
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
