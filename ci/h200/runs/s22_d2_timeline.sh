#!/usr/bin/env bash
# Session 22, call 2 (H200): per-CTA timelines of our one-consumer tiles and of DeepGEMM.
# .device-bin/bfp8-tl: a diagnostic build (also compiling 64x64 s10 and s11) (git show <this commit>:ci/h200/runs/s22_diag.patch,
# -DBFP8_DIAG_PRINT) whose 64-row tiles record, and whose bench prints on stderr at its end, each CTA's %globaltimer stamps for every 64th
# launch (entry, barriers made, first / last TMA issued, first stage landed, last K block
# done, C store issued, exit). DeepGEMM: a patched copy (s22_dg_timeline.py) records entry and
# end. Then three builds A/B'd in one interleaved loop: the instrumented build without recording (bfp8-inst; its stamps are dead code), that
# without the exit's wait for the C store (-DBFP8_DIAG_NOWAIT, as DeepGEMM's kernel ends), and
# with the tensor maps prefetched before the barrier set-up (-DBFP8_DIAG_EARLY_PREFETCH).
set -u
B=.device-bin
W=/tmp/o; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $W/gpu.txt
( bash .peers/build_deepgemm.sh > $W/dg_build.log 2>&1 ) &
dg=$!
for s in 64,4096,7168 128,4096,7168 64,4096,3584; do
  timeout 60 $B/bfp8-tl bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_kslope --mnk $s > $W/ours_tl_$s.json 2> $W/ours_tl_$s.txt
  echo "ours timeline $s rc=$?"
done
timeout 60 $B/bfp8-tl bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_s11 --mnk 128,4096,7168 > $W/ours_tl_s11.json 2> $W/ours_tl_s11.txt
# Ring depth with slabs at 128x4096x7168 (DeepGEMM runs 64x64 in 12 stages): 64x64 s8 / s10 /
# s11 with slabs and s12 without, in the instrumented build without printing (bfp8-inst).
for r in 1 2; do for st in 8 10 11 12; do
  timeout 60 $B/bfp8-inst bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_s$st --mnk 128,4096,7168 > $W/ring_s${st}_$r.json 2> $W/ring_s${st}_$r.err
done; done
shapes="64,4096,7168 128,4096,7168 64,7168,18432 64,18432,7168 128,18432,7168 1024,4096,7168 4096,4096,7168 4096,2112,7168 4096,7168,2048"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
for r in 1 2; do for v in inst nowait prefetch; do
  bin=$B/bfp8-$v
  timeout 150 $bin bench --backend cuda --no-progress --no-check --json "${args[@]}" > $W/ab_${v}_$r.json 2> $W/ab_${v}_$r.err
  echo "ab $v $r rc=$?"
done; done
wait $dg
timeout 240 python3 $B/s22_dg_timeline.py 64,4096,7168 128,4096,7168 64,4096,3584 > $W/dg_tl.txt 2>&1
echo "dg timeline rc=$?"
cd $W && tar czf $OUT/r.tgz . && ls
