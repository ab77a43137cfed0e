#!/usr/bin/env bash
# Session 40, device call 2: does a last wave that fills every SM pay under the power cap?
# Proxy shapes of the same work whose tiles fill whole waves on 132 SMs: 4608x2112x6400 (396
# tiles of 128x192 = 3 x 132, 50 K blocks; against 4096x2112x7168's 352 = 2.67 x 132, 56 blocks)
# and 4224x4096x6912 (528 tiles of 128x256 = 4 x 132, 54 blocks; against 4096x4096x7168's 512,
# 56 blocks). The shipped CLI/library, the same tile forced at each shape: ncu cycles at its fixed
# clock, then paired races against DeepGEMM (two passes), nvidia-smi sampling clock and power.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT/r; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
xz -dkf .devx/s40/blockfp8.xz && chmod +x .devx/s40/blockfp8; CLI=.devx/s40/blockfp8; CFG=$(pwd)/.devx/s40/cfg
shapes="4096,2112,7168 4608,2112,6400 4096,4096,7168 4224,4096,6912"
(bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$?" >> $R/dg_build.log) &
bpid=$!
for s in $shapes; do
  timeout 150 $NCU --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 2 \
    $CLI bench --backend cuda --mnk $s --scale-layout column-major --config-dir $CFG --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress > $R/ncu_ours_${s//,/x}.csv 2>&1
  echo "ncu ours $s rc=$?"
done
wait $bpid; tail -1 $R/dg_build.log
export PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-}
for s in $shapes; do DG_PRINT_CONFIGS=1 python3 ci/h200/deepgemm_time.py --warm $s > $R/dgwarm_${s//,/x}.log 2>&1 & done; wait
for s in 4608,2112,6400 4224,4096,6912; do
  timeout 150 $NCU --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max --csv --kernel-name "regex:fp8_gemm|sm90_fp8" --launch-count 1 \
    python3 ci/h200/deepgemm_time.py --warm $s > $R/ncu_dg_${s//,/x}.csv 2>&1
  echo "ncu dg $s rc=$?"
done
site=$(bash ci/h200/package_site.sh .devx/s40/libblockfp8_capi.so)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 100 > $R/smi.csv 2>&1 &
spid=$!
args=(); for s in $shapes; do args+=(--mnk "$s"); done
for p in 1 2; do
  check=(); [ $p -gt 1 ] && check=(--no-check)
  BLOCKFP8_CONFIG_DIR=$CFG PYTHONPATH="$site:/tmp/dgb/dg:ci/h200:$PYTHONPATH" timeout 280 python3 ci/h200/python_race.py \
    --out $R/A$p --contenders deepgemm --column-major-scales --rounds 8 --no-eager --no-crate-bench ${check[@]+"${check[@]}"} "${args[@]}" > $R/A$p.log 2>&1
  echo "race pass $p rc=$?"
done
kill $spid
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
