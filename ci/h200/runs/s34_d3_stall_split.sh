#!/usr/bin/env bash
# Session 34, call 3 (H200, $OUT set).
# 1. Call 1's stalled tune again (.devx/rtw: call 1's candidate build, s34_rt.patch, with the
#    tuner's --stall-warning), same shapes and batch sizes, stall warning at 20 s.
# 2. The kernel default's K split at few-tile shapes: its 64x64 tile with SPLIT_K pinned to 1-4
#    through config files, beside the rule's own choice (the kernel default path), 3 rounds.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
xz -d -T4 .devx/rtw/blockfp8.xz; chmod +x .devx/rtw/blockfp8
X=.devx/rtw/blockfp8
t0=$(date +%s)
B="--shape 24576,1536 --shape 12288,1536 --shape 32768,512 --shape 16384,512"
timeout 150 $X tune --backend cuda $B --batch-size 64,96,128,256 --save-path $R/tuned_B --no-progress --stall-warning 20 > $R/tune_B.log 2> $R/tune_B.err
echo "tune B rc=$? wall_s=$(( $(date +%s) - t0 ))"; grep -i "running for\|stall" $R/tune_B.err | head; tail -n 3 $R/tune_B.log
python3 - $R <<'PY'
import json, os, sys
R = sys.argv[1]
def tile(m, n):
    tiles = -(-m // 64) * -(-n // 64)
    if m <= 128:
        s = 4 if tiles > 132 else (11 if 4 * tiles > 3 * 132 else 8)
    else:
        s = 4
    return {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 8, "num_warps": 4, "num_stages": s}
for split in (1, 2, 3, 4):
    d = f"{R}/split{split}"; os.makedirs(d, exist_ok=True)
    for n in (512, 1024, 2048):
        for k in (1024, 2048, 4096):
            e = {str(m): dict(tile(m, n), SPLIT_K=split) for m in (100, 256)}
            json.dump(e, open(f"{d}/N={n},K={k},device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json", "w"))
PY
S=""; for n in 512 1024 2048; do for k in 1024 2048 4096; do S="$S --shape $n,$k"; done; done
for r in 1 2 3; do
  for s in 1 2 3 4; do
    timeout 40 $X bench --backend cuda --config-dir $R/split$s $S --batch-size 100,256 --no-progress --no-check --json > $R/split${s}_$r.json 2>/dev/null; echo "$r split$s rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
best = {}
for s in (1, 2, 3, 4):
    for r in (1, 2, 3):
        try: d = json.load(open(f"{R}/split{s}_{r}.json"))
        except Exception: continue
        for sh in d["shapes"]:
            for x in sh["measurements"]:
                key = (sh["m"], sh["n"], sh["k"], f"split{s}" if x["implementation"] == "tuned" else x["implementation"])
                if x["implementation"] in ("tuned", "kernel_default") and (key not in best or x["time_us"] < best[key][0]):
                    best[key] = (x["time_us"], x.get("config", ""))
rows = sorted({k[:3] for k in best})
print("| M | N | K | rule (config) | split 1 | 2 | 3 | 4 |")
for m, n, k in rows:
    d = best.get((m, n, k, "kernel_default"), (0, ""))
    print(f"| {m} | {n} | {k} | {d[0]:.2f} ({d[1]}) | " + " | ".join(f"{best.get((m, n, k, f'split{s}'), (0,))[0]:.2f}" for s in (1, 2, 3, 4)) + " |")
PY
cd $OUT && tar czf r.tgz r && rm -rf r
