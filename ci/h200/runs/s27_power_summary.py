"""SM clock and power through each phase, in 250 ms bins: s27_power_summary.py SAMPLES.csv PHASES.log
(samples: nvidia-smi timestamp, clocks.sm, power.draw; phases: 'start|end NAME YYYY/mm/dd HH:MM:SS.fff')."""
import sys
from datetime import datetime

F = "%Y/%m/%d %H:%M:%S.%f"
samples = []
for line in open(sys.argv[1]):
    parts = [x.strip() for x in line.split(",")]
    try:
        samples.append((datetime.strptime(parts[0], F), float(parts[1].split()[0]), float(parts[2].split()[0])))
    except (ValueError, IndexError):
        pass
marks = {}
for line in open(sys.argv[2]):
    kind, name, day, time = line.split()
    marks.setdefault(name, {})[kind] = datetime.strptime(f"{day} {time}", F)
for name, t in marks.items():
    xs = [s for s in samples if t["start"] <= s[0] <= t.get("end", s[0])]
    print(f"== {name}: {len(xs)} samples; t (s), SM clock MHz, power W per 250 ms bin")
    bins = {}
    for ts, clk, pw in xs:
        bins.setdefault(int((ts - t["start"]).total_seconds() * 4), []).append((clk, pw))
    print(" ".join(f"{b / 4:.2f}:{sum(c for c, _ in v) / len(v):.0f}/{sum(p for _, p in v) / len(v):.0f}" for b, v in sorted(bins.items())))
