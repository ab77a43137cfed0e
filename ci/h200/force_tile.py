"""Config files that make `blockfp8 bench --config-dir DIR` run one tile at chosen products.

Usage: python3 ci/h200/force_tile.py OUT_DIR --tile m256n128w8s3 [--group 8] [--split 1]
           [--device NVIDIA_H200] --mnk 4096,4096,7168 [--mnk M,N,K ...]

Writes (or adds to) OUT_DIR's `N=..,K=..,device_name=..,dtype=fp8_w8a8,block_shape=[128,128].json`
files, one entry per product at its M naming the tile (BLOCK_SIZE_M/N from `m<BM>n<BN>`,
num_warps from `w<W>`, num_stages from `s<S>`; a trailing `c2` or `c2k` for CTA pairs). A bench
through that folder beside one through the shipped files is a same-call A/B of the tile (a
patched build's CLI runs tiles the shipped build does not compile). Runs on either machine.
"""
import argparse
import json
import os
import re
import sys


def tile_entry(tile, group, split):
    m = re.fullmatch(r"m(\d+)n(\d+)w(\d+)s(\d+)(c2k?)?", tile)
    if not m:
        sys.exit(f"--tile {tile!r}: expected m<BM>n<BN>w<W>s<S>, optionally c2 or c2k (e.g. m256n128w8s3)")
    bm, bn, w, s = (int(x) for x in m.groups()[:4])
    e = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": group, "num_warps": w, "num_stages": s}
    if m.group(5):
        e["blockfp8_cluster"] = 2
        if m.group(5) == "c2k":
            e["blockfp8_cluster_splits_k"] = True
    else:
        e["SPLIT_K"] = split
    return e


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--tile", required=True)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--split", type=int, default=1)
    p.add_argument("--device", default="NVIDIA_H200")
    p.add_argument("--mnk", action="append", required=True, help="M,N,K (repeatable)")
    a = p.parse_args()
    if not 1 <= a.group <= 4096 or not 1 <= a.split <= 1024:
        sys.exit("--group must lie in 1..=4096 and --split in 1..=1024")
    entry = tile_entry(a.tile, a.group, a.split)
    os.makedirs(a.out_dir, exist_ok=True)
    for mnk in a.mnk:
        try:
            m, n, k = (int(x) for x in mnk.split(","))
        except ValueError:
            sys.exit(f"--mnk {mnk!r}: expected three integers M,N,K")
        if min(m, n, k) < 1:
            sys.exit(f"--mnk {mnk!r}: sizes must be positive")
        path = os.path.join(a.out_dir, f"N={n},K={k},device_name={a.device},dtype=fp8_w8a8,block_shape=[128,128].json")
        table = json.load(open(path)) if os.path.exists(path) else {}
        table[str(m)] = entry
        table = {str(key): table[str(key)] for key in sorted(int(x) for x in table)}
        with open(path, "w") as f:
            f.write(json.dumps(table, indent=4) + "\n")
        print(path)


if __name__ == "__main__":
    main()
