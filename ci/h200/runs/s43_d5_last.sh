#!/usr/bin/env bash
# Session 43, call 5: (1) no-load, the CTA's last C not stored (s43v12) against as built
# (s42noab), 2816x2112 / 1408x2112 at K = 3584, ncu fixed clock; (2) with loads, the CTA's last C
# by the consumers' fragment stores (s43l13, s43_l13_lastfrag.patch) against the shipped CLI:
# accuracy at partial tiles, ncu_ab at four shapes, and timed (bench, 3 alternations).
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r5; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
MET=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
met() { grep -o "\"$2\",\"[a-z]*\",\"[0-9.,]*\"" "$1" | grep -o '[0-9.,]*"$' | tr -d '",'; }
for v in s42noab s43v12 s41ship s43l13; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
SHAPES="1408,2112,3584 2816,2112,3584 2816,2112,10752"
C=/tmp/cfg5; for s in $SHAPES; do python3 ci/h200/force_tile.py $C --tile m128n192w8s4 --group 8 --mnk $s > /dev/null; done
for r in 1 2; do for v in s42noab s43v12; do for s in $SHAPES; do f=$R/${v}_${s//,/x}_$r.csv
  timeout 120 "$NCU" --metrics $MET --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 1 .devx/$v/blockfp8 bench --backend cuda \
    --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk $s --config-dir $C > $f 2>/dev/null
  echo "$v $s $(met $f gpc__cycles_elapsed.max) $(met $f sm__cycles_active.avg) $(met $f smsp__inst_executed.sum)"
done; done; done | tee $R/noload.txt
CK=/tmp/cfgk; python3 ci/h200/force_tile.py $CK --tile m128n192w8s4 --group 8 --mnk 1000,2112,7168 > /dev/null
python3 ci/h200/force_tile.py $CK --tile m128n256w8s4 --group 8 --mnk 1000,4096,7168 > /dev/null
for s in 1000,2112,7168 1000,4096,7168; do
  .devx/s43l13/blockfp8 bench --backend cuda --no-progress --repeats 3 --rounds 1 --mnk $s --config-dir $CK 2>&1 | tee -a $R/check.txt | grep -E "^\|" | tail -2
done
OUT=$R/ncu CLI_A=.devx/s41ship/blockfp8 CLI_B=.devx/s43l13/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 2816,2112,7168 1024,18432,7168 4096,4096,7168 > $R/ncu_ab.log 2>&1
grep "^|" $R/ncu/ncu_ab.md | grep -v inst_exec
L="4096,2112,7168 2816,2112,7168 1024,18432,7168 4096,4096,7168 4096,7168,2048"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do for v in s41ship s43l13; do
  .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
done; done
python3 ci/h200/ab_compare.py $(ls $R/t_s41ship_*.json | paste -sd,) $(ls $R/t_s43l13_*.json | paste -sd,) | tee $R/timed_ab.md | grep -v kernel_default
tar czf $OUT/r5.tgz -C /tmp r5
