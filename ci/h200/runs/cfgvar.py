# Config-folder variants for A/B: copy the H200 files of SRC into DST, changing every kernel
# entry of M >= MMIN that names a 128-row tile (wide tiles) as asked.
# usage: cfgvar.py SRC DST MMIN key=value ...   (value int; cluster=2 -> blockfp8_cluster)
import json, os, sys
src, dst, mmin = sys.argv[1], sys.argv[2], int(sys.argv[3])
kv = dict(a.split("=") for a in sys.argv[4:])
only_bn = int(kv.pop("only_bn", 0))
os.makedirs(dst, exist_ok=True)
n = 0
for f in os.listdir(src):
    if "H200" not in f or not f.endswith(".json"): continue
    d = json.load(open(os.path.join(src, f)))
    for m, e in d.items():
        if int(m) < mmin or e.get("blockfp8_path") or e.get("BLOCK_SIZE_M") != 128 or e.get("BLOCK_SIZE_N", 0) < 192 or (only_bn and e["BLOCK_SIZE_N"] != only_bn): continue
        for k, v in kv.items():
            if k == "cluster": e["blockfp8_cluster"] = int(v)
            else: e[k] = int(v)
        n += 1
    json.dump(d, open(os.path.join(dst, f), "w"))
print(dst, n, "entries changed", file=sys.stderr)
