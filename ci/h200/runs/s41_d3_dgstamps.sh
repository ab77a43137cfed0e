#!/usr/bin/env bash
# Session 41, device call 3: DeepGEMM's per-CTA timeline (s41_dg_stamps.py patches its JIT
# header with clock stamps and a printf per CTA) at 4096x2112x7168 and 1024x18432x7168, plain
# and under ncu's fixed clock, to set beside the crate's (s40_edges.patch, call 7 of session 40);
# (call 3: the stamps by global stores; call 2 held them in registers and slowed the K loop).
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r; rm -rf $R; mkdir -p $R

bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1 || { echo "DeepGEMM build failed"; tail $R/dg_build.log; }
python3 ci/h200/runs/s41_dg_stamps.py --patch
export PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} DG_JIT_CACHE_DIR=/tmp/dgjit3  # (fresh: the JIT cache key does not cover the header)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for s in 4096,2112,7168 1024,18432,7168; do
  f=$R/dg_${s//,/x}
  python3 ci/h200/runs/s41_dg_stamps.py --run $s > $f.plain 2> $f.plain.err; echo "$s plain rc=$?"
  "$NCU" --metrics gpc__cycles_elapsed.max,sm__cycles_active.max --kernel-name "regex:sm90_fp8_gemm_1d2d" --launch-skip 2 --launch-count 1 \
    python3 ci/h200/runs/s41_dg_stamps.py --run $s > $f.ncu 2> $f.ncu.err; echo "$s ncu rc=$?"
  grep -c "^DGS" $f.plain $f.ncu
done
tar czf /tmp/r.tgz -C /tmp r && mv /tmp/r.tgz $OUT/
