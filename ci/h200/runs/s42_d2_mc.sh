#!/usr/bin/env bash
# Session 42, device call 2: weight-multicast CTA pairs (blockfp8_cluster 2) with the tile's
# weight rows loaded as now (each CTA half, to both) and as DeepGEMM does (rank 0 the whole tile,
# rank 1 none; s42_mc_rank0.patch, -DBFP8_DIAG_MC_RANK0). Both builds compile the c2 tiles through
# a temporary config file. Correctness at odd/even pair counts, ncu cycles at the fixed clock
# against the shipped build, and each build's bench (c2 forced as the tuned path beside the
# unclustered kernel default, interleaved rounds) at the board's own clock.
set -u
: "${OUT:?}"; mkdir -p "$OUT"
C=/tmp/cfgmc
python3 ci/h200/force_tile.py $C --tile m128n192w8s4c2 --group 8 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 640,2112,7168 --mnk 1024,2112,7168 > /dev/null
python3 ci/h200/force_tile.py $C --tile m128n256w8s4c2 --group 16 --mnk 4096,4096,7168 --mnk 640,4096,7168 > /dev/null
for v in mc mc0; do xz -dkf .devx/s42$v/blockfp8.xz && chmod +x .devx/s42$v/blockfp8; done
for v in mc mc0; do
  echo "== check $v"
  .devx/s42$v/blockfp8 bench --backend cuda --config-dir $C --no-progress --scale-layout column-major --warmup 1 --repeats 3 --rounds 1 \
    --mnk 640,2112,7168 --mnk 1024,2112,7168 --mnk 640,4096,7168 2>&1 | tail -8
done
for v in mc mc0; do
  OUT=/tmp/ncu_$v CLI_A=.devx/s41ship/blockfp8.xz CLI_B=.devx/s42$v/blockfp8 CFG_B=$C ROUNDS=2 bash ci/h200/ncu_ab.sh \
    4096,2112,7168 4096,4096,7168 1024,18432,7168 > /dev/null 2>&1
  cp /tmp/ncu_$v/ncu_ab.md $OUT/ncu_ab_$v.md; echo "== ncu $v"; grep "gpc__\|inst_exec" $OUT/ncu_ab_$v.md
done
for v in mc0 mc; do
  echo "== bench $v"
  .devx/s42$v/blockfp8 bench --backend cuda --config-dir $C --no-progress --no-check --scale-layout column-major --warmup 3 --repeats 32 --rounds 8 \
    --mnk 4096,2112,7168 --mnk 4096,4096,7168 --mnk 1024,18432,7168 2>&1 | tail -8 | tee $OUT/bench_$v.txt
done
