#!/usr/bin/env bash
# Session 19, one call: CTAs wait only for their last C stores to have read shared memory
# (the staged build) against fc21ffc's CLI (.device-bin/diag/b0, which waits for the writes):
# A/B on the 86 one-consumer entries at M = 64-256 and the 20 race shapes; if the new build is
# faster, its CUDA GPU tests and the race of record (race.sh). Results re-tarred after each step.
set -u
B=.device-bin; D=$B/diag; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R/race
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
args=(); for s in $(cat $D/ab_shapes.txt); do args+=(--mnk "$s"); done
race="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
rargs=(); for s in $race; do rargs+=(--mnk "$s"); done
run() { local tag=$1 bin=$2; shift 2; timeout 100 $bin bench --backend cuda --no-check --no-progress --json "$@" > $R/$tag.json 2> $R/$tag.err; echo "$tag rc=$? $(date -u +%T)"; }
run ab_b0 $D/b0 "${args[@]}"
run ab_new $B/blockfp8 "${args[@]}"
run race_b0 $D/b0 "${rargs[@]}"
pack
gain=$(python3 - $R <<'PY'
import json, math, sys
def load(p):
    return {(s["m"], s["n"], s["k"]): m["time_us"] for s in json.load(open(p))["shapes"] for m in s["measurements"] if m["implementation"] == "tuned"}
a, b = load(sys.argv[1] + "/ab_b0.json"), load(sys.argv[1] + "/ab_new.json")
r = [b[k] / a[k] for k in a if k in b]
print(math.exp(sum(map(math.log, r)) / len(r)))
PY
)
echo "one-consumer new/b0 geomean: $gain"
if python3 -c "import sys; sys.exit(0 if float('$gain') < 0.995 else 1)"; then
    timeout 150 $B/cuda-default --include-ignored --skip anchor_benchmark --test-threads 4 > $R/cuda_tests.log 2>&1; echo "tests rc=$? $(date -u +%T)"
    grep -E "test result|FAILED|panicked" $R/cuda_tests.log | head -5
    pack
    OUT=$R/race timeout 150 bash $B/race.sh > $R/race/race.log 2>&1; echo "race rc=$? $(date -u +%T)"
    tail -4 $R/race/race.md
    pack
fi
