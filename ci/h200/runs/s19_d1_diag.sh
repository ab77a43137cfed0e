#!/usr/bin/env bash
# Session 19 diagnostic (timing-only builds): is the one-consumer tile bound by its chain or its data?
set -u
D=.device-bin/diag; FINAL_OUT=$OUT; OUT=/tmp/r; rm -rf $OUT; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
shapes="128,4096,7168 64,4096,7168 64,7168,18432 128,7168,18432 64,18432,7168"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
( bash .peers/build_deepgemm.sh > $OUT/dg_build.log 2>&1 ) &
dgb=$!
run() { local tag=$1 bin=$2; shift 2; timeout 120 $D/$bin bench --backend cuda --no-check --no-progress --json "${args[@]}" "$@" > $OUT/$tag.json 2> $OUT/$tag.err; echo "$tag rc=$?"; }
run b0 b0
run no_promote NO_PROMOTE
run no_wgmma NO_WGMMA
run no_slab NO_SLAB
run no_slab_s10 NO_SLAB --config-dir $D/cfg10
run no_slab_s12 NO_SLAB --config-dir $D/cfg12
run b0_s8 b0 --config-dir $D/cfg8
run no_wgmma_no_slab NO_WGMMA_NO_SLAB
run no_wgmma_no_slab_s12 NO_WGMMA_NO_SLAB --config-dir $D/cfg12
run b0_again b0
wait $dgb
PYTHONPATH=/tmp/dgb/dg timeout 200 python3 .device-bin/deepgemm_time.py --json $OUT/deepgemm.json "${args[@]}" > $OUT/deepgemm.log 2>&1; echo "dg rc=$?"
cd $OUT && tar czf $FINAL_OUT/r.tgz *.json *.err *.log gpu.txt
