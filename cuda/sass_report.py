"""Static evidence for the sm_90a GEMM kernels of a build: for every tile the shipped NVIDIA
config files name (and the kernel default tiles), the ptxas resources of each output dtype
(registers, stack frame, spills, from OUT_DIR/cuda_resource_report.txt) and, from the SASS
(`cuobjdump -sass`), the wgmma (QGMMA) instructions inside the kernel's main loop and any
local-memory access (LDL/STL). Fails (exit 1) when a shipped tile spills, has a stack frame,
touches local memory or has no QGMMA in a loop.

Usage: python3 cuda/sass_report.py OUT_DIR [--cuobjdump PATH] [--markdown FILE]
OUT_DIR: the build's output folder (target/<profile>/build/blockfp8-*/out of a `--features cuda`
build). cuobjdump: the CUDA toolkit's, or the one Triton's wheel carries.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

SYMBOL = re.compile(r"^sm90_gemm_block_fp8_m(\d+)n(\d+)w(\d+)s(\d+)(?:c(\d+)(k)?)?_(bf16|f16|f32)$")


def shipped_tiles(configs="configs"):
    """(bm, bn, warps, stages, cluster, K-split pair) named by kernel entries of the NVIDIA config files."""
    out = set()
    for f in sorted(glob.glob(os.path.join(configs, "*NVIDIA*.json"))):
        for entry in json.load(open(f)).values():
            if entry.get("blockfp8_path") == "vendor":
                continue
            out.add((entry["BLOCK_SIZE_M"], entry["BLOCK_SIZE_N"], entry["num_warps"], entry.get("num_stages", 2), entry.get("blockfp8_cluster", 1), entry.get("blockfp8_cluster_splits_k", False) is True))
    return out


def resources(report_path):
    """symbol -> {regs, stack, spill_stores, spill_loads} from ptxas -v output."""
    res, cur = {}, None
    for line in open(report_path, errors="replace"):
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = m.group(1)
            res.setdefault(cur, {})
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            res[cur].update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            res[cur]["regs"] = int(m.group(1))
    return res


def sass_functions(cuobjdump, cubin):
    """symbol -> [(address, instruction text)]."""
    text = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m and cur:
            funcs[cur].append((int(m.group(1), 16), m.group(2)))
    return funcs


def main_loop(instrs):
    """(QGMMA count, shapes) of the K loop: of the innermost backward-branch loops that hold
    QGMMA (none holds another), the one with the most (the steady loop, where the K loop is
    unrolled over the ring's stages beside block-by-block head and tail loops), and the number
    of LDL/STL instructions in the function."""
    spans = []
    for addr, ins in instrs:
        m = re.search(r"\bBRA\s+(?:`\(\S+\)\s*)?0x([0-9a-f]+)", ins)
        if not m:
            continue
        target = int(m.group(1), 16)
        if target >= addr:
            continue
        body = [i for a, i in instrs if target <= a <= addr and "QGMMA" in i]
        if body:
            spans.append((target, addr, body))
    inner = [s for s in spans if not any(o is not s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]
    best = (0, set())
    for _, _, body in inner:
        if len(body) > best[0]:
            best = (len(body), {re.search(r"QGMMA\.(\S+)", i).group(1) for i in body})
    local = sum(1 for _, i in instrs if re.search(r"\b(LDL|STL)\b", i))
    return best[0], best[1], local


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    p.add_argument("--cuobjdump", default=shutil.which("cuobjdump"))
    p.add_argument("--markdown")
    a = p.parse_args()
    if not a.cuobjdump:
        sys.exit("no cuobjdump: pass --cuobjdump (the CUDA toolkit's, or triton/backends/nvidia/bin/cuobjdump)")
    res = resources(os.path.join(a.out_dir, "cuda_resource_report.txt"))
    funcs = {}
    for cubin in sorted(glob.glob(os.path.join(a.out_dir, "gemm_block_fp8_*_sm_90a.cubin"))):
        funcs.update(sass_functions(a.cuobjdump, cubin))
    shipped = shipped_tiles()
    compiled = {}
    for sym in funcs:
        m = SYMBOL.match(sym)
        if m:
            bm, bn, w, s, cl, ks, dt = m.groups()
            compiled.setdefault((int(bm), int(bn), int(w), int(s), int(cl or 1), ks == "k"), {})[dt] = sym
    rows, bad = [], []
    for tile in sorted(compiled):
        name = f"m{tile[0]}n{tile[1]}w{tile[2]}s{tile[3]}" + (f"c{tile[4]}" if tile[4] > 1 else "") + ("k" if tile[5] else "")
        cells = []
        for dt in ("bf16", "f16", "f32"):
            sym = compiled[tile].get(dt)
            if sym is None:
                cells.append("-")
                continue
            r = res.get(sym, {})
            n, shapes, local = main_loop(funcs[sym])
            if n == 0 and any("HMMA" in i for _, i in funcs[sym]):
                # The mma.sync body (K % 16 != 0, non-sm_90a tiles): f16 HMMA, no wgmma.
                shapes = {"mma.sync body: HMMA, no QGMMA"}
            ok = n > 0 and local == 0 and r.get("stack", 1) == 0 and r.get("spill_stores", 1) == 0 and r.get("spill_loads", 1) == 0
            if not ok and tile in shipped:
                bad.append(f"{sym}: loop QGMMA {n}, LDL/STL {local}, resources {r}")
            loop = f"{n} x QGMMA.{'/'.join(sorted(shapes))} in the main loop" if n else ("/".join(shapes) or "no QGMMA")
            cells.append(f"{r.get('regs', '?')} regs, stack {r.get('stack', '?')}, spills {r.get('spill_stores', '?')}/{r.get('spill_loads', '?')}, {loop}, LDL/STL {local}")
        rows.append(f"| {name} | {'yes' if tile in shipped else 'no'} | " + " | ".join(cells) + " |")
    lines = ["| tile | named by a shipped config | bf16 out | f16 out | f32 out |", "|---|---|---|---|---|"] + rows
    missing = sorted(shipped - set(compiled))
    if missing:
        lines.append("")
        lines.append("Shipped tiles not compiled as TMA kernels (they run the mma.sync body): " + ", ".join(map(str, missing)))
    out = "\n".join(lines) + "\n"
    print(out)
    if a.markdown:
        open(a.markdown, "w").write(out)
    if bad:
        print("FAILED:\n" + "\n".join(bad), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
