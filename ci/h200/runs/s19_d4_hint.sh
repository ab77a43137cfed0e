#!/usr/bin/env bash
# Session 19, one call: the barrier waits with a suspend-time hint (the staged build) against
# the build before (.device-bin/diag/b0, the CLI of fc21ffc): A/B on the 86 one-consumer entries
# at M = 64-256 (two interleaved rounds) and the 20 race shapes; then the race of record of the
# staged build (race.sh), its device-API and CUDA GPU tests, and the Python package's pytest.
set -u
B=.device-bin; D=$B/diag; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R/race $R/dapi $R/py
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
args=(); for s in $(cat $D/ab_shapes.txt); do args+=(--mnk "$s"); done
race="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
rargs=(); for s in $race; do rargs+=(--mnk "$s"); done
run() { local tag=$1 bin=$2; shift 2; timeout 150 $bin bench --backend cuda --no-check --no-progress --json "$@" > $R/$tag.json 2> $R/$tag.err; echo "$tag rc=$? $(date -u +%T)"; }
run ab_b0_1 $D/b0 "${args[@]}"
run ab_hint_1 $B/blockfp8 "${args[@]}"
run ab_b0_2 $D/b0 "${args[@]}"
run ab_hint_2 $B/blockfp8 "${args[@]}"
run race_b0 $D/b0 "${rargs[@]}"
OUT=$R/race timeout 300 bash $B/race.sh > $R/race/race.log 2>&1; echo "race rc=$? $(date -u +%T)"
OUT=$R/dapi BENCH=0 timeout 300 bash $B/device_api.sh > $R/dapi/run.log 2>&1; echo "device_api rc=$? $(date -u +%T)"
OUT=$R/py STEPS="install test" timeout 200 bash $B/python_package.sh > $R/py/run.log 2>&1; echo "python rc=$? $(date -u +%T)"
tail -3 $R/dapi/run.log; grep -E "passed|failed" $R/py/run.log | tail -2
cd $R && tar czf $FINAL_OUT/r.tgz *
