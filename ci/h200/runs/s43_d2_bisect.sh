#!/usr/bin/env bash
# Session 43, call 2: which part of the crate's kernel carries its fixed cycles a CTA. No-load
# builds (s43_noab_base.patch = session 41's s41_noab.patch) with one part removed each:
# v1 no C output (s43_v1_noc.patch), v2 C stored at once without the store warp
# (s43_v2_atonce.patch), v3 no weight-scale copies (s43_v3_noscales.patch), v5 = v1 + v3.
# 128x192 s4 forced at N = 2112, M = 1408 / 2816 / 4224 (1-3 tiles on 121 CTAs), K = 3584 / 10752,
# ncu at its fixed clock, one process each.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r2; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
SHAPES="1408,2112,3584 1408,2112,10752 2816,2112,3584 2816,2112,10752 4224,2112,3584 4224,2112,10752"
C=/tmp/cfg2; for s in $SHAPES; do python3 ci/h200/force_tile.py $C --tile m128n192w8s4 --group 8 --mnk $s > /dev/null; done
met() { grep -o "\"$2\",\"[a-z]*\",\"[0-9.,]*\"" "$1" | grep -o '[0-9.,]*"$' | tr -d '",'; }
for v in s42noab s43v1 s43v2 s43v3 s43v5; do
  xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8
  for s in $SHAPES; do
    f=$R/${v}_${s//,/x}.csv
    timeout 120 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 1 .devx/$v/blockfp8 bench --backend cuda \
      --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk $s --config-dir $C > $f 2>/dev/null
    echo "$v $s $(met $f gpc__cycles_elapsed.max) $(met $f sm__cycles_active.avg) $(met $f smsp__inst_executed.sum)"
  done
done | tee $R/summary.txt
tar czf $OUT/r2.tgz -C /tmp r2
