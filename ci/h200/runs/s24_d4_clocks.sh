#!/usr/bin/env bash
# Session 24, call 4 (H200, $OUT set; .device-bin staged, .peers carried): why DeepGEMM's large-M
# times move between passes (call 3: 4096x24576x1536 238.2 then 284.0 us). The SM clock, power
# and throttle reasons sampled every 20 ms while DeepGEMM (deepgemm_time.py) and the crate's
# bench take turns on two large-M shapes, three times each; phases stamped in phases.txt.
set -u
B=.device-bin
here=$(cd "$(dirname "$0")" && pwd)
R=$OUT/r; mkdir -p $R
bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1 || { echo "deepgemm build failed"; tail -5 $R/dg_build.log; }
export PYTHONPATH=/tmp/dgb/dg:$B:${PYTHONPATH:-}
for s in 4096,24576,1536 4096,4096,7168; do python3 $B/deepgemm_time.py --warm $s & done; wait
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 20 > $R/smi.csv 2>&1 &
smi=$!
stamp() { echo "$(date -u +%H:%M:%S.%N | cut -c1-12) $*" >> $R/phases.txt; }
for r in 1 2 3; do
  for s in 4096,24576,1536 4096,4096,7168; do
    stamp "dg $s start"; timeout 100 python3 $B/deepgemm_time.py --json $R/dg_${r}_$s.json --mnk $s > /dev/null 2>> $R/dg.err; stamp "dg $s end"
    stamp "crate $s start"; timeout 100 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --mnk $s > $R/crate_${r}_$s.json 2>> $R/crate.err; stamp "crate $s end"
  done
done
kill $smi
python3 - "$R" <<'PY' | tee $R/summary.txt
import json, sys, glob, os
R = sys.argv[1]
for f in sorted(glob.glob(f"{R}/dg_*.json")):
    print(os.path.basename(f), [round(x.get("deepgemm_us", 0), 1) for x in json.load(open(f))])
for f in sorted(glob.glob(f"{R}/crate_*.json")):
    d = json.load(open(f))
    print(os.path.basename(f), [(m["implementation"], round(m["time_us"], 1)) for s in d["shapes"] for m in s["measurements"]])
PY
tar czf $OUT/r.tgz -C $OUT r
