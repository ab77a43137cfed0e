#!/usr/bin/env bash
# Session 43, call 3: the last C store's cost. No-load builds at 128x192 s4 (N = 2112, M = 1408 /
# 2816, K = 3584 / 10752, ncu fixed clock): v0 as shipped (s42noab), v1 no C at all, v6 no wait
# for the CTA's last stores (s43_v6_nowait.patch, diagnostic only), v7 the consumers' last wait
# on the stores' reads only (s43_v7_readwait.patch). Then with loads: the shipped CLI against v6l
# (no last wait; s43_v6l_nowait_loaded.patch) under ncu (ncu_ab.sh) and by the clock (bench, 4
# alternations) at 4096x2112x7168, 2816x2112x7168, 4096x4096x7168.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r3; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
SHAPES="1408,2112,3584 1408,2112,10752 2816,2112,3584 2816,2112,10752"
C=/tmp/cfg3; for s in $SHAPES; do python3 ci/h200/force_tile.py $C --tile m128n192w8s4 --group 8 --mnk $s > /dev/null; done
met() { grep -o "\"$2\",\"[a-z]*\",\"[0-9.,]*\"" "$1" | grep -o '[0-9.,]*"$' | tr -d '",'; }
for v in s42noab s43v1 s43v6 s43v7 s41ship s43v6l; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
for r in 1 2; do for v in s42noab s43v1 s43v6 s43v7; do
  for s in $SHAPES; do
    f=$R/${v}_${s//,/x}_$r.csv
    timeout 120 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 1 .devx/$v/blockfp8 bench --backend cuda \
      --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk $s --config-dir $C > $f 2>/dev/null
    echo "$v $s $(met $f gpc__cycles_elapsed.max) $(met $f sm__cycles_active.avg) $(met $f smsp__inst_executed.sum)"
  done
done; done | tee $R/noload.txt
OUT=$R/ncu CLI_A=.devx/s41ship/blockfp8 CLI_B=.devx/s43v6l/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 2816,2112,7168 4096,4096,7168 > $R/ncu_ab.log 2>&1
grep "^|" $R/ncu/ncu_ab.md
L="4096,2112,7168 2816,2112,7168 4096,4096,7168"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3 4; do for v in s41ship s43v6l; do
  .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
done; done
A=$(ls $R/t_s41ship_*.json | paste -sd,); B=$(ls $R/t_s43v6l_*.json | paste -sd,)
python3 ci/h200/ab_compare.py $A $B | tee $R/timed_ab.md
tar czf $OUT/r3.tgz -C /tmp r3
