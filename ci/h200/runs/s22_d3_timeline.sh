#!/usr/bin/env bash
# Session 22, call 3 (H200): call 2's timelines again, with the diagnostic build fixed
# (git show <this commit>:ci/h200/runs/s22_diag.patch: no stamp per stage in the producer, whose
# per-stage %globaltimer read slowed the ring by 1.4 us at 64x4096x7168; records read before
# the module unloads), beside the stock default build's times and DeepGEMM's timeline.
set -u
B=.device-bin
W=/tmp/o; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $W/gpu.txt
( bash .peers/build_deepgemm.sh > $W/dg_build.log 2>&1 ) &
dg=$!
for r in 1 2; do
for s in 64,4096,7168 128,4096,7168 64,4096,3584; do
  timeout 60 $B/bfp8-tl bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_kslope --mnk $s > $W/ours_tl_${s}_$r.json 2> $W/ours_tl_${s}_$r.txt
  timeout 60 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_kslope --mnk $s > $W/stock_${s}_$r.json 2> $W/stock_${s}_$r.err
  echo "$s $r rc=$?"
done; done
wait $dg
timeout 240 python3 $B/s22_dg_timeline.py 64,4096,7168 128,4096,7168 64,4096,3584 > $W/dg_tl.txt 2>&1
echo "dg timeline rc=$?"
cd $W && tar czf $OUT/r.tgz . && ls | wc -l
