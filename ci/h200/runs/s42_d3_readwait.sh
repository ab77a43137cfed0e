#!/usr/bin/env bash
# Session 42, device call 3: a CTA's last wait on its C stores for their reads of shared memory
# only (cp.async.bulk.wait_group.read, as CUTLASS's epilogues end; s42_read_wait.patch) against
# the shipped build (e0e50fd): ncu cycles at the fixed clock, then both CLIs' benches alternated
# (shipped configs, graph replay) at the board's own clock.
set -u
: "${OUT:?}"; mkdir -p "$OUT"
A=.devx/s41ship/blockfp8; B=.devx/s42rd/blockfp8
for c in $A $B; do xz -dkf $c.xz && chmod +x $c; done
OUT=/tmp/ncu CLI_A=$A CLI_B=$B ROUNDS=3 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 4096,24576,1536 4096,7168,2048 128,18432,7168 64,4096,7168 128,4096,7168 64,18432,7168 > /dev/null 2>&1
cp /tmp/ncu/ncu_ab.md $OUT/ && grep "gpc__" $OUT/ncu_ab.md
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,18432,7168 --mnk 128,18432,7168 --mnk 64,24576,1536 --mnk 4096,2112,7168 --mnk 4096,24576,1536"
for r in 1 2 3; do
  for side in A B; do
    c=$A; [ $side = B ] && c=$B
    $c bench --backend cuda --no-check --no-progress --scale-layout column-major --warmup 3 --repeats 24 --rounds 3 --csv $S > $OUT/bench_${side}_$r.csv 2>/dev/null
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, statistics, sys, collections
out = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(out + "/bench_*_*.csv")):
    side = f.split("bench_")[1][0]
    for row in csv.DictReader(open(f)):
        if row.get("implementation", row.get("path", "")).startswith("tuned"):
            t[(row["m"], row["n"], row["k"], side)].append(float(row.get("us", row.get("time_us", "nan"))))
keys = sorted({k[:3] for k in t}, key=lambda k: tuple(map(int, k)))
for k in keys:
    a, b = t[k + ("A",)], t[k + ("B",)]
    print("x".join(k), "A", a, "B", b, "A/B median %.4f" % (statistics.median(a) / statistics.median(b)))
PY
