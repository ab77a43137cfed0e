#!/usr/bin/env bash
# Session 42, device call 6: both kernels without their A and B tile loads, at ncu's fixed clock,
# in one call: the crate's shipped build against its no-load diagnostic (s41_noab.patch), and
# DeepGEMM plain against DeepGEMM with s42_dg_noab.py's patch (its JIT header without the A and
# B copies). Each DeepGEMM variant in a fresh JIT cache; two processes per side and shape.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
SHAPES="4096,2112,7168 4096,4096,7168"
bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1 || { echo "DeepGEMM build failed"; tail $R/dg_build.log; }
dg() {  # tag: ncu over DeepGEMM at each shape, 2 processes each
  for s in $SHAPES; do
    PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} python3 ci/h200/deepgemm_time.py --warm $s > $R/warm_$1_${s//,/x}.log 2>&1
    for r in 1 2; do
      PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} timeout 200 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_fp8_gemm_1d2d" --launch-skip 2 --launch-count 1 \
        python3 ci/h200/deepgemm_time.py --json /tmp/dg.json --mnk $s > $R/dg_$1_${s//,/x}_$r.csv 2> $R/dg_$1_${s//,/x}_$r.err
      echo "dg $1 $s $r rc=$? $(grep -o '"gpc__cycles_elapsed.max","cycle","[0-9,]*"' $R/dg_$1_${s//,/x}_$r.csv)"
    done
  done
}
DG_JIT_CACHE_DIR=/tmp/dgj_plain dg plain
python3 ci/h200/runs/s42_dg_noab.py
DG_JIT_CACHE_DIR=/tmp/dgj_noab dg noab
OUT=$R/ours CLI_A=.devx/s41ship/blockfp8.xz CLI_B=.devx/s42noab/blockfp8.xz ROUNDS=2 bash ci/h200/ncu_ab.sh $SHAPES > /dev/null 2>&1
grep "^|" $R/ours/ncu_ab.md
tar czf /tmp/r.tgz -C /tmp r && mv /tmp/r.tgz $OUT/
