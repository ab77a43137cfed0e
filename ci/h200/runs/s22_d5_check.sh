#!/usr/bin/env bash
# Session 22, call 5 (H200): the default build of the final tree runs its CUDA suite, then
# benches the 12 re-tuned tp 2 / tp 4 items through the shipped files and through the files
# before the re-tune (.device-bin/configs-base, staged with BASE_CONFIGS_REV=47ef6c3), two
# interleaved rounds. Then the first TMA's cost at N = 4096: .device-bin/bfp8-fc, a build of
# s22_fc.patch (git show <this commit>:ci/h200/runs/s22_fc.patch) whose one-consumer tiles keep
# the last launch's per-CTA stamps (no counter, no per-stage stamp: %clock64 along the
# producer's path to its first TMA, %globaltimer at entry, barriers made, first stage landed and
# exit), beside the stock build's times in the same call.
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
T=$B/cuda-default OUT=$R TEST_TIMEOUT=200 bash $B/tests.sh; pack
args=(); for s in 48,3072,1536 96,3072,1536 128,3072,1536 48,6144,1536 64,6144,1536 48,7168,2048 96,7168,2048 32,7168,2304 96,7168,2304 96,7168,4096 48,7168,4608 96,7168,4608; do args+=(--mnk $s); done
for r in 1 2; do
  timeout 80 $B/blockfp8 bench --backend cuda --no-progress --json "${args[@]}" > $R/bench_shipped_$r.json 2> $R/bench_shipped_$r.err; echo "bench shipped rc=$?"
  timeout 80 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir $B/configs-base "${args[@]}" > $R/bench_base_$r.json 2> $R/bench_base_$r.err; echo "bench base rc=$?"
done
for r in 1 2; do for s in 64,4096,7168 128,4096,7168; do
  timeout 60 $B/bfp8-fc bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_kslope --mnk $s > $R/fc_${s}_$r.json 2> $R/fc_${s}_$r.txt
  timeout 60 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_kslope --mnk $s > $R/fcstock_${s}_$r.json 2> $R/fcstock_${s}_$r.err
  echo "fc $s $r rc=$?"
done; done
pack
