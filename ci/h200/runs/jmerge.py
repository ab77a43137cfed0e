# Puts each record of tuner journals in place of the same M in configs/ (vendor winners as
# the tuner writes them: the config with "blockfp8_path": "vendor").
import json, sys
for j in sys.argv[1:]:
    for line in open(j):
        r = json.loads(line)
        f = f"configs/N={r['n']},K={r['k']},device_name={r['device']},dtype=fp8_w8a8,block_shape=[128,128].json"
        d = json.load(open(f)); m = str(r["m"])
        e = dict(r["config"])
        if r["choice"] == "vendor": e = {k: v for k, v in e.items() if k != "SPLIT_K"}; e["blockfp8_path"] = "vendor"
        if d.get(m) != e: print(r["n"], r["k"], m, r["choice"], d.get(m), "->", e, "%.2f us" % r["time_us"])
        d[m] = e
        open(f, "w").write(json.dumps(dict(sorted(d.items(), key=lambda kv: int(kv[0]))), indent=4) + "\n")
