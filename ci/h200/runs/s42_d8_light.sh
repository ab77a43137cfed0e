#!/usr/bin/env bash
# Session 42, device call 8: lighter waiting by the producer warpgroup (s42_light.patch): every
# mbarrier wait with CUTLASS's suspend-time hint (a failed try-wait sleeps rather than spins), and
# the scale warp's `full` arrivals from the lanes that copy (1 + SB per stage when the activation
# scales come by TMA, instead of 1 + 32). GPU tests; the K slope of the no-load diagnostic with
# and without it; ncu cycles against the shipped build; both CLIs' benches alternated.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r8; rm -rf $R; mkdir -p $R
V=.devx/s42lt
for b in cuda-default device_api blockfp8; do xz -dkf $V/$b.xz && chmod +x $V/$b; done
for c in .devx/s42noab .devx/s42ltna .devx/s41ship; do xz -dkf $c/blockfp8.xz && chmod +x $c/blockfp8; done
OUT=$R T=$V/cuda-default TEST_TIMEOUT=110 bash ci/h200/tests.sh
OUT=$R T=$V/device_api TEST_TIMEOUT=40 bash ci/h200/tests.sh
C=/tmp/cfg8; for k in 3584 14336; do python3 ci/h200/force_tile.py $C --tile m128n192w8s4 --group 8 --mnk 4096,2112,$k > /dev/null; done
OUT=$R/slope CLI_A=.devx/s42noab/blockfp8 CLI_B=.devx/s42ltna/blockfp8 CFG_A=$C CFG_B=$C ROUNDS=1 bash ci/h200/ncu_ab.sh 4096,2112,3584 4096,2112,14336 > /dev/null 2>&1
grep "gpc__" $R/slope/ncu_ab.md
OUT=$R/ab CLI_A=.devx/s41ship/blockfp8 CLI_B=$V/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 4096,4096,7168 1024,18432,7168 128,4096,7168 > /dev/null 2>&1
grep "gpc__\|inst_exec" $R/ab/ncu_ab.md
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 128,18432,7168 --mnk 4096,2112,7168 --mnk 4096,4096,7168 --mnk 4096,24576,1536"
for r in 1 2; do for side in A B; do
  c=.devx/s41ship/blockfp8; [ $side = B ] && c=$V/blockfp8
  $c bench --backend cuda --no-check --no-progress --scale-layout column-major --warmup 3 --repeats 24 --rounds 3 --csv $S > $R/bench_${side}_$r.csv 2>/dev/null
done; done
python3 - $R <<'PY'
import csv, glob, statistics, sys, collections
t = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + "/bench_*_*.csv")):
    side = f.split("bench_")[1][0]
    for row in csv.DictReader(open(f)):
        if row["implementation"] == "tuned":
            t[(row["m"], row["n"], row["k"], side)].append(float(row["time_us"]))
for k in sorted({k[:3] for k in t}, key=lambda k: tuple(map(int, k))):
    a, b = t[k + ("A",)], t[k + ("B",)]
    print("x".join(k), "A", a, "B", b, "A/B %.4f" % (statistics.median(a) / statistics.median(b)))
PY
tar czf /tmp/r8.tgz -C /tmp r8 && mv /tmp/r8.tgz $OUT/
