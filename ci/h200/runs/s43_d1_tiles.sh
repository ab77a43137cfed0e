#!/usr/bin/env bash
# Prepared in session 42 for the next session's first call (not yet run): the fixed cycles of a
# CTA split into a per-CTA and a per-tile part, both kernels without their A and B tile loads
# (the crate's s41_noab.patch build in .devx/s42noab; DeepGEMM patched by s42_dg_noab.py), at
# N = 2112 with M = 1408, 2816 and 4224 (1, 2 and 3 tiles of 128x192 on each of 121 CTAs) and
# K = 3584 and 10752, ncu's fixed clock, two processes each. Fit cycles = a + t (b + c K / 128).
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r1; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
SHAPES="1408,2112,3584 2816,2112,3584 4224,2112,3584 1408,2112,10752 2816,2112,10752 4224,2112,10752"
bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1 || { echo "DeepGEMM build failed"; tail $R/dg_build.log; }
python3 ci/h200/runs/s42_dg_noab.py
export DG_PRINT_CONFIGS=1 DG_JIT_CACHE_DIR=/tmp/dgj_noab PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-}
for s in $SHAPES; do python3 ci/h200/deepgemm_time.py --warm $s > $R/warm_${s//,/x}.log 2>&1 & done
xz -dkf .devx/s42noab/blockfp8.xz && chmod +x .devx/s42noab/blockfp8
C=/tmp/cfg1; for s in $SHAPES; do python3 ci/h200/force_tile.py $C --tile m128n192w8s4 --group 8 --mnk $s > /dev/null; done
cyc() { grep -o '"gpc__cycles_elapsed.max","cycle","[0-9,]*"' "$1" | grep -o '[0-9,]*"$' | tr -d '",'; }
for s in $SHAPES; do for r in 1 2; do
  timeout 120 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 1 .devx/s42noab/blockfp8 bench --backend cuda \
    --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk $s --config-dir $C > $R/ours_${s//,/x}_$r.csv 2>/dev/null
  echo "ours $s $r $(cyc $R/ours_${s//,/x}_$r.csv)"
done; done
wait
for s in $SHAPES; do for r in 1 2; do
  timeout 200 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_fp8_gemm_1d2d" --launch-skip 2 --launch-count 1 \
    python3 ci/h200/deepgemm_time.py --json /tmp/dg.json --mnk $s > $R/dg_${s//,/x}_$r.csv 2> $R/dg_${s//,/x}_$r.err
  echo "dg $s $r $(cyc $R/dg_${s//,/x}_$r.csv)"
done; done
grep -h "block M" $R/warm_*.log | sed 's/.*M: \([0-9]*\), N.*K: \([0-9]*\),.*-> \(.*\), shared.*/\1 \2: \3/'
tar czf /tmp/r1.tgz -C /tmp r1 && mv /tmp/r1.tgz $OUT/
