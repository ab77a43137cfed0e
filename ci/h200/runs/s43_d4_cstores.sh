#!/usr/bin/env bash
# Session 43, call 4: what the C writes cost each kernel without A/B tile loads, at 2816x2112
# (both 128x192 s4, two tiles a CTA), K = 3584 / 10752, ncu fixed clock. DeepGEMM no-load
# (s42_dg_noab.py) then also without its TMA stores of C (s43_dg_nostore.py); the crate no-load
# (s42noab), without any C (s43v1), without the TMA stores of C only (s43v11).
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r4; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
SHAPES="2816,2112,3584 2816,2112,10752"
met() { grep -o "\"$2\",\"[a-z]*\",\"[0-9.,]*\"" "$1" | grep -o '[0-9.,]*"$' | tr -d '",'; }
bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1 || { echo "DeepGEMM build failed"; tail $R/dg_build.log; }
python3 ci/h200/runs/s42_dg_noab.py
export DG_PRINT_CONFIGS=1 PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-}
dg() {  # $1 tag, JIT dir per header patch
  export DG_JIT_CACHE_DIR=/tmp/dgj_$1
  for s in $SHAPES; do python3 ci/h200/deepgemm_time.py --warm $s > $R/warm_$1_${s//,/x}.log 2>&1 & done; wait
  for s in $SHAPES; do for r in 1 2; do f=$R/dg_$1_${s//,/x}_$r.csv
    timeout 200 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_fp8_gemm_1d2d" --launch-skip 2 --launch-count 1 \
      python3 ci/h200/deepgemm_time.py --json /tmp/dg.json --mnk $s > $f 2> $f.err
    echo "dg_$1 $s $(met $f gpc__cycles_elapsed.max) $(met $f sm__cycles_active.avg) $(met $f smsp__inst_executed.sum)"
  done; done
}
dg noab | tee $R/summary.txt
python3 ci/h200/runs/s43_dg_nostore.py
dg nostore | tee -a $R/summary.txt
C=/tmp/cfg4; for s in $SHAPES; do python3 ci/h200/force_tile.py $C --tile m128n192w8s4 --group 8 --mnk $s > /dev/null; done
for v in s42noab s43v1 s43v11; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
for r in 1 2; do for v in s42noab s43v1 s43v11; do for s in $SHAPES; do f=$R/${v}_${s//,/x}_$r.csv
  timeout 120 "$NCU" --metrics $M --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 1 .devx/$v/blockfp8 bench --backend cuda \
    --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk $s --config-dir $C > $f 2>/dev/null
  echo "$v $s $(met $f gpc__cycles_elapsed.max) $(met $f sm__cycles_active.avg) $(met $f smsp__inst_executed.sum)"
done; done; done | tee -a $R/summary.txt
grep -h "block M" $R/warm_*.log | sort | uniq -c
tar czf $OUT/r4.tgz -C /tmp r4
