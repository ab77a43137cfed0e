#!/usr/bin/env bash
# Session 47, call 2. Two builds of d269738 (ci/h200/stage_variant.sh):
# - gate (s47_gate.patch): the shipped kernels (the launch encodes the last-C map only for
#   store-warp tiles);
# - ah192 (s47_ah192.patch): gate plus the 192-wide tiles reading a K block's scales one block
#   ahead (as 128x128 / 128x256 do), with a 224 / 56 register split on those tiles (at 216 they
#   spilled 40-88 bytes).
# ncu cycles at the fixed clock (2 rounds) at the two 128x192 race shapes and a 128x256 control;
# the CLIs' benches alternated; a paired A/B against DeepGEMM at the 128x192 shapes; ah192's GPU
# tests. Carry: .devx/gate .devx/ah192 .peers. Results under /tmp/r2 -> $OUT/r2.tgz; tables on stdout and $OUT/summary.md.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r2; rm -rf $R; mkdir -p $R
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; date -u
for v in gate ah192; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; xz -dkf .devx/$v/libblockfp8_capi.so.xz; done
( bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$? at $SECONDS s" >> $R/dg_build.log ) &
DG=$!
OUT=$R/ncu CLI_A=.devx/gate/blockfp8 CLI_B=.devx/ah192/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 1024,18432,7168 4096,4096,7168 > $R/ncu_ab.log 2>&1
grep "^|" $R/ncu/*.md 2>/dev/null || tail -40 $R/ncu_ab.log
echo "ncu A/B done at $SECONDS s"
L="4096,2112,7168 1024,18432,7168 4096,4096,7168 4096,7168,2048"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do
  for v in gate ah192; do
    .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
  done
done
echo "ah192 timed over gate:"; python3 ci/h200/ab_compare.py $(ls $R/t_gate_*.json | paste -sd,) $(ls $R/t_ah192_*.json | paste -sd,) | grep -v kernel_default
echo "timed done at $SECONDS s"
for t in cuda device_api; do xz -dc .devx/ah192/$t.xz > .devx/ah192/$t && chmod +x .devx/ah192/$t
  OUT=$R T=.devx/ah192/$t TEST_TIMEOUT=150 bash ci/h200/tests.sh; echo "ah192 $t tests rc=$? ($SECONDS s)"; done
wait $DG; tail -1 $R/dg_build.log
if [ $SECONDS -lt 430 ]; then
  OUT=$R/paired LIB_A=.devx/gate/libblockfp8_capi.so LIB_B=.devx/ah192/libblockfp8_capi.so PASSES=2 timeout $((570 - SECONDS)) bash ci/h200/paired_ab.sh 4096,2112,7168 1024,18432,7168 > $R/paired.log 2>&1
  grep -v "^$" $R/paired/paired_ab.md 2>/dev/null || tail -20 $R/paired.log
fi
echo "done at $SECONDS s"
