#!/usr/bin/env bash
# Session 42, device call 4: weight-multicast pairs with C deferred and the store warp (session
# 39's s39_c2defer change) and rank 0 loading the whole weight tile (s42_c2defer_rank0.patch,
# -DBFP8_DIAG_MC_RANK0: build dr0), and the same with each CTA loading half (build dh).
# Correctness at odd/even pair counts, ncu cycles at the fixed clock against the shipped build,
# then each build's bench with the pairs forced as the tuned path beside the unclustered kernel
# default (interleaved rounds, the board's own clock).
set -u
: "${OUT:?}"; mkdir -p "$OUT"
C=/tmp/cfgmc
python3 ci/h200/force_tile.py $C --tile m128n192w8s4c2 --group 8 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 640,2112,7168 --mnk 1024,2112,7168 > /dev/null
python3 ci/h200/force_tile.py $C --tile m128n256w8s4c2 --group 16 --mnk 4096,4096,7168 --mnk 640,4096,7168 > /dev/null
python3 ci/h200/force_tile.py $C --tile m128n256w8s3c2 --group 32 --mnk 4096,24576,1536 --mnk 640,24576,1536 > /dev/null
for v in dr0 dh; do xz -dkf .devx/s42$v/blockfp8.xz && chmod +x .devx/s42$v/blockfp8; done
for v in dr0 dh; do
  echo "== check $v"
  .devx/s42$v/blockfp8 bench --backend cuda --config-dir $C --no-progress --scale-layout column-major --warmup 1 --repeats 3 --rounds 1 \
    --mnk 640,2112,7168 --mnk 1024,2112,7168 --mnk 640,4096,7168 --mnk 640,24576,1536 --csv 2>&1 | cut -d, -f1-6,9 | grep tuned
done
for v in dr0 dh; do
  OUT=/tmp/ncu_$v CLI_A=.devx/s41ship/blockfp8.xz CLI_B=.devx/s42$v/blockfp8 CFG_B=$C ROUNDS=2 bash ci/h200/ncu_ab.sh \
    4096,2112,7168 4096,4096,7168 1024,18432,7168 4096,24576,1536 > /dev/null 2>&1
  cp /tmp/ncu_$v/ncu_ab.md $OUT/ncu_ab_$v.md; echo "== ncu $v"; grep "gpc__" $OUT/ncu_ab_$v.md
done
for v in dr0 dh; do
  echo "== bench $v"
  .devx/s42$v/blockfp8 bench --backend cuda --config-dir $C --no-progress --no-check --scale-layout column-major --warmup 3 --repeats 32 --rounds 8 \
    --mnk 4096,2112,7168 --mnk 4096,4096,7168 --mnk 1024,18432,7168 --mnk 4096,24576,1536 --csv 2>&1 | cut -d, -f1-6 | grep -E "tuned|kernel_default" | tee $OUT/bench_$v.txt
done
