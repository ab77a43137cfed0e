#!/usr/bin/env bash
# Session 36, call 1 (H200, $OUT set). .devx/m256 is the CLI and cuda test binary of the tree with
# s36_m256c2.patch: DeepGEMM's 256x128 tile (3 stages) and the weight-multicast pairs 128x256 s3/s4 c2
# and 128x192 s4 c2 compiled beside the default build's tiles (whose SASS the patch leaves as is).
# (1) GPU tests of that build (every compiled config, the two-consumer stress).
# (2) Same-call A/B at the large-M race shapes, two interleaved rounds: shipped files (ship) against
#     forced files naming 256x128 s3 (f256: group 8 and 16) and the c2 pairs (fc2).
# (3) The first GPU run of the tuner's split alternatives and served-entry candidate: a re-tune at
#     the M = 64 / 128 race shapes, then an A/B of its picks against the shipped files.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
X=.devx/m256/blockfp8
timeout 200 .devx/m256/cuda --include-ignored --test-threads 4 every_compiled_config two_consumer_tiles gemm_anchor_shapes > $R/tests.log 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"; grep -E "test result|FAILED|panicked" $R/tests.log | head
F=ci/h200/force_tile.py
BIG="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,7168,2048"
python3 $F $R/f256g8 --tile m256n128w8s3 --group 8 $BIG > /dev/null
python3 $F $R/f256g16 --tile m256n128w8s3 --group 16 $BIG > /dev/null
python3 $F $R/fc2 --tile m128n256w8s4c2 --group 16 --mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 > /dev/null
python3 $F $R/fc2 --tile m128n256w8s3c2 --group 16 --mnk 4096,24576,1536 --mnk 4096,7168,2048 > /dev/null
python3 $F $R/fc2 --tile m128n192w8s4c2 --group 8 --mnk 4096,2112,7168 --mnk 1024,18432,7168 > /dev/null
ALL="$BIG --mnk 4096,2112,7168 --mnk 1024,18432,7168"
bench() { timeout $1 $X bench --backend cuda --no-progress --no-check --json --scale-layout column-major "${@:2}"; }
for r in 1 2; do
  for v in ship f256g8 f256g16 fc2; do
    cfg=""; [ $v != ship ] && cfg="--config-dir $R/$v"
    bench 80 $cfg $ALL > $R/b_${v}_$r.json 2>$R/b_${v}_$r.err; echo "b $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
for v in f256g8 f256g16 fc2; do
  python3 ci/h200/ab_compare.py $R/b_ship_1.json,$R/b_ship_2.json $R/b_${v}_1.json,$R/b_${v}_2.json > $R/ab_$v.md
  echo "== $v"; grep tuned $R/ab_$v.md; grep geomean $R/ab_$v.md
done
S="--shape 4096,7168 --shape 7168,18432 --shape 18432,7168 --shape 24576,1536 --shape 32768,512 --shape 7168,16384"
left=$(( 560 - ($(date +%s) - t0) ))
timeout $(( left - 130 )) $X tune --backend cuda $S --batch-size 64,128 --save-path $R/tuned --no-progress --stall-warning 20 > $R/tune.log 2>&1
echo "tune rc=$? t=$(( $(date +%s) - t0 ))"; grep -iE "running for|error|skipp" $R/tune.log | head -5
for r in 1 2; do
  for v in ship new; do
    cfg=""; [ $v = new ] && cfg="--config-dir $R/tuned"
    [ $(( $(date +%s) - t0 )) -lt 550 ] || continue
    bench 40 $cfg $S --batch-size 64,128 > $R/t_${v}_$r.json 2>/dev/null; echo "t $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
A=$(ls $R/t_ship*.json | tr '\n' , | sed 's/,$//'); B=$(ls $R/t_new*.json | tr '\n' , | sed 's/,$//')
python3 ci/h200/ab_compare.py $A $B > $R/ab_t.md; grep tuned $R/ab_t.md; grep geomean $R/ab_t.md
cd $OUT && tar czf r.tgz r && rm -rf r
