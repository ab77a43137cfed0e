# A/B table from b_<variant>_<round>.json bench outputs (best of rounds, tuned path).
import json, sys, glob, collections
d, vs = sys.argv[1], sys.argv[2].split(",")
res = collections.defaultdict(dict); cfg = collections.defaultdict(dict)
for f in glob.glob(d + "/b_*.json"):
    v, r = f.split("/")[-1][2:-5].rsplit("_", 1)
    try: j = json.load(open(f))
    except Exception as e: print("bad", f, e); continue
    for s in j["shapes"]:
        for mm in s["measurements"]:
            if mm["implementation"] == "tuned":
                key = (s["m"], s["n"], s["k"])
                if mm["time_us"] < res[key].get(v, 1e9): res[key][v] = mm["time_us"]; cfg[key][v] = mm.get("config", "")
print("| M | N | K | " + " | ".join(vs) + " | " + " | ".join(v + " vs " + vs[0] for v in vs[1:]) + " |")
gm = collections.defaultdict(list)
for k in sorted(res):
    b = res[k].get(vs[0]); row = ["%.2f" % res[k][v] if v in res[k] else "-" for v in vs]
    rel = []
    for v in vs[1:]:
        if v in res[k] and b: rel.append("%+.1f%%" % ((res[k][v] / b - 1) * 100)); gm[v].append(res[k][v] / b)
        else: rel.append("-")
    print("| %d | %d | %d | " % k + " | ".join(row) + " | " + " | ".join(rel) + " |", cfg[k].get(vs[-1], ""))
import math
for v, xs in gm.items(): print(v, "geomean time ratio %.4f" % math.exp(sum(map(math.log, xs)) / len(xs)))
