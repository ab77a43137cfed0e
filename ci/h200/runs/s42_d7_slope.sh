#!/usr/bin/env bash
# Session 42, device call 7: the K slope of both kernels without their A and B tile loads
# (the crate's s41_noab.patch build; DeepGEMM with s42_dg_noab.py's patch), 4096x2112xK at
# K = 3584, 7168, 10752, 14336 under ncu's fixed clock: cycles a K block (the consumers' loop with
# no data waits) and the fixed part of a CTA's cycles, side by side.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r7; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
KS="3584 7168 10752 14336"
bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1 || { echo "DeepGEMM build failed"; tail $R/dg_build.log; }
python3 ci/h200/runs/s42_dg_noab.py
export DG_PRINT_CONFIGS=1 DG_JIT_CACHE_DIR=/tmp/dgj_noab PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-}
for k in $KS; do python3 ci/h200/deepgemm_time.py --warm 4096,2112,$k > $R/warm_$k.log 2>&1 & done
xz -dkf .devx/s42noab/blockfp8.xz && chmod +x .devx/s42noab/blockfp8
C=/tmp/cfg7; for k in $KS; do python3 ci/h200/force_tile.py $C --tile m128n192w8s4 --group 8 --mnk 4096,2112,$k > /dev/null; done
cyc() { grep -o '"gpc__cycles_elapsed.max","cycle","[0-9,]*"' "$1" | grep -o '[0-9,]*"$' | tr -d '",'; }
for k in $KS; do for r in 1 2; do
  timeout 120 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 1 .devx/s42noab/blockfp8 bench --backend cuda \
    --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk 4096,2112,$k --config-dir $C > $R/ours_${k}_$r.csv 2>/dev/null
  echo "ours $k $r $(cyc $R/ours_${k}_$r.csv)"
done; done
wait
for k in $KS; do for r in 1 2; do
  timeout 200 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_fp8_gemm_1d2d" --launch-skip 2 --launch-count 1 \
    python3 ci/h200/deepgemm_time.py --json /tmp/dg.json --mnk 4096,2112,$k > $R/dg_${k}_$r.csv 2> $R/dg_${k}_$r.err
  echo "dg $k $r $(cyc $R/dg_${k}_$r.csv)"
done; done
tar czf /tmp/r7.tgz -C /tmp r7 && mv /tmp/r7.tgz $OUT/
