"""Session 27: writes the config folders of calls 4-6 (.devx/cfg-A .. cfg-F) from the shipped H200
files of 8915a0a: each folder holds copies of a few files with some M >= 1024 entries changed."""
import copy
import json
import os


def name(n, k):
    return f"N={n},K={k},device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"


def tile(bm, bn, w, s, g):
    return {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": g, "num_warps": w, "num_stages": s, "SPLIT_K": 1}


short = ["2048", "3072", "4096"]
# Calls 4-5: whole entries replaced.
entries = {
    "A": {(24576, 1536): (short, tile(128, 192, 8, 4, 16)), (7168, 2048): (["4096"], tile(128, 256, 8, 3, 16)), (2112, 7168): (["4096"], tile(128, 192, 8, 4, 16))},
    "B": {(24576, 1536): (short, tile(128, 192, 8, 4, 8)), (7168, 2048): (["4096"], tile(128, 256, 8, 3, 32)), (2112, 7168): (["4096"], tile(128, 144, 8, 5, 8))},
    "C": {(24576, 1536): (short, tile(128, 256, 8, 3, 32)), (7168, 2048): (["4096"], tile(128, 256, 8, 3, 4)), (2112, 7168): (["4096"], tile(128, 192, 8, 4, 4))},
    "D": {(24576, 1536): (short, tile(128, 256, 8, 3, 8)), (7168, 2048): (["4096"], tile(128, 192, 8, 4, 8)), (2112, 7168): (["4096"], tile(128, 192, 8, 4, 32))},
}
# Call 6: GROUP_SIZE_M alone.
groups = {
    "E": {(4096, 7168): {"1024": 4, "2048": 32, "4096": 32}, (7168, 16384): {"4096": 32}, (18432, 7168): {"1024": 16}},
    "F": {(4096, 7168): {"1024": 16, "2048": 4, "4096": 4}, (7168, 16384): {"4096": 8}, (18432, 7168): {"1024": 4}},
}
for v, spec in list(entries.items()) + list(groups.items()):
    d = f".devx/cfg-{v}"
    os.makedirs(d, exist_ok=True)
    for (n, k), change in spec.items():
        f = json.load(open("configs/" + name(n, k)))
        if v in entries:
            ms, t = change
            for m in ms:
                f[m] = copy.deepcopy(t)
        else:
            for m, g in change.items():
                f[m]["GROUP_SIZE_M"] = g
        json.dump(f, open(f"{d}/{name(n, k)}", "w"), indent=2)
