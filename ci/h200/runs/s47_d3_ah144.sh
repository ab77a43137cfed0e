#!/usr/bin/env bash
# Session 47, call 3. ah144 (s47_ah144.patch) against ah192 (s47_ah192.patch, call 2's winner):
# the 128x144 tiles read a K block's scales one block ahead too (their eight start-offset loops
# each an AHEAD loop, block by block as before; registers 216 / 72 as before). ncu cycles at the
# fixed clock (2 rounds) at three 128x144 shapes, the benches alternated at five, a paired A/B
# against DeepGEMM at two, ah144's GPU tests. Carry: .devx/ah192 .devx/ah144 .peers.
# Results under /tmp/r3 -> $OUT/r3.tgz; tables on stdout and $OUT/summary.md.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r3; rm -rf $R; mkdir -p $R
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; date -u
for v in ah192 ah144; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; xz -dkf .devx/$v/libblockfp8_capi.so.xz; done
( bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$? at $SECONDS s" >> $R/dg_build.log ) &
DG=$!
OUT=$R/ncu CLI_A=.devx/ah192/blockfp8 CLI_B=.devx/ah144/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh 128,18432,7168 2048,2112,7168 1024,4608,7168 > $R/ncu_ab.log 2>&1
grep "^|" $R/ncu/*.md 2>/dev/null || tail -40 $R/ncu_ab.log
echo "ncu A/B done at $SECONDS s"
L="128,18432,7168 256,18432,7168 2048,2112,7168 1024,4608,7168 512,4608,7168"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do
  for v in ah192 ah144; do
    .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
  done
done
echo "ah144 timed over ah192:"; python3 ci/h200/ab_compare.py $(ls $R/t_ah192_*.json | paste -sd,) $(ls $R/t_ah144_*.json | paste -sd,) | grep -v kernel_default
echo "timed done at $SECONDS s"
for t in cuda device_api; do xz -dc .devx/ah144/$t.xz > .devx/ah144/$t && chmod +x .devx/ah144/$t
  OUT=$R T=.devx/ah144/$t TEST_TIMEOUT=150 bash ci/h200/tests.sh; echo "ah144 $t tests rc=$? ($SECONDS s)"; done
wait $DG; tail -1 $R/dg_build.log
if [ $SECONDS -lt 430 ]; then
  OUT=$R/paired LIB_A=.devx/ah192/libblockfp8_capi.so LIB_B=.devx/ah144/libblockfp8_capi.so PASSES=2 timeout $((570 - SECONDS)) bash ci/h200/paired_ab.sh 128,18432,7168 2048,2112,7168 > $R/paired.log 2>&1
  grep -v "^$" $R/paired/paired_ab.md 2>/dev/null || tail -20 $R/paired.log
fi
echo "done at $SECONDS s"
