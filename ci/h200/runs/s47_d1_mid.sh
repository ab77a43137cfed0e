#!/usr/bin/env bash
# Session 47, call 1. Two builds of d269738 (ci/h200/stage_variant.sh):
# - gate (s47_gate.patch): the launch encodes the last-C map only for store-warp tiles (no
#   kernel change: the shipped kernels, the baseline here);
# - mid (s47_mid.patch): gate plus the 192-wide tile's two K loops (one per start offset) made
#   one, its middle 64 columns' weight-scale block chosen by a select a K block (code 8348 -> 7060
#   instructions; the question is whether the second loop's code cost instruction fetch).
# ncu cycles at its fixed clock (ncu_ab.sh, 2 rounds) at the two 128x192 race shapes and a
# 128x256 control; the no-instruction stall share; DeepGEMM's cycles at 4096x2112x7168 in the
# same call; the CLIs' benches alternated; mid's GPU tests (cuda, device_api).
# Carry: .devx/gate .devx/mid .peers. Results under /tmp/r1 -> $OUT/r1.tgz; tables on stdout and $OUT/summary.md.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r1; rm -rf $R; mkdir -p $R
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; date -u
for v in gate mid; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
met() { grep -o "\"$2\",\"[a-z%]*\",\"[0-9.,]*\"" "$1" | grep -o '[0-9.,]*"$' | tr -d '",' | paste -sd' '; }
( bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$? at $SECONDS s" >> $R/dg_build.log ) &
DG=$!
OUT=$R/ncu CLI_A=.devx/gate/blockfp8 CLI_B=.devx/mid/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 1024,18432,7168 4096,4096,7168 > $R/ncu_ab.log 2>&1
grep "^|" $R/ncu/*.md 2>/dev/null || tail -40 $R/ncu_ab.log
echo "ncu A/B done at $SECONDS s"
for v in gate mid; do f=$R/stall_$v.csv
  timeout 120 "$NCU" --metrics smsp__warp_issue_stalled_no_instruction_per_warp_active.pct,smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct --csv \
    --kernel-name regex:sm90_gemm_block_fp8_m --launch-count 2 .devx/$v/blockfp8 bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk 4096,2112,7168 > $f 2> $f.err
  echo "$v stalls (no_instruction, branch_resolving, wait %): $(met $f smsp__warp_issue_stalled_no_instruction_per_warp_active.pct) | $(met $f smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct) | $(met $f smsp__warp_issue_stalled_wait_per_warp_active.pct)"
done
L="4096,2112,7168 1024,18432,7168 4096,4096,7168 4096,7168,16384 4096,7168,2048 4096,24576,1536"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do
  [ $SECONDS -lt 330 ] || { echo "timed round $r skipped at $SECONDS s"; break; }
  for v in gate mid; do
    .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
  done
done
echo "mid timed over gate:"; python3 ci/h200/ab_compare.py $(ls $R/t_gate_*.json | paste -sd,) $(ls $R/t_mid_*.json | paste -sd,) | grep -v kernel_default
wait $DG; tail -1 $R/dg_build.log
if ls /tmp/dgb/dg/*.so > /dev/null 2>&1 && [ $SECONDS -lt 420 ]; then
  export PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} DG_PRINT_CONFIGS=1
  python3 ci/h200/deepgemm_time.py --warm 4096,2112,7168 > $R/dg_warm.log 2>&1
  for r in 1 2; do f=$R/dg_ncu_$r.csv
    timeout 150 "$NCU" --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum --csv --kernel-name "regex:sm90_fp8_gemm_1d2d" --launch-skip 2 --launch-count 1 \
      python3 ci/h200/deepgemm_time.py --json /tmp/dg.json --mnk 4096,2112,7168 > $f 2> $f.err
    echo "DeepGEMM 4096x2112x7168 round $r: cycles $(met $f gpc__cycles_elapsed.max) active $(met $f sm__cycles_active.avg) inst $(met $f smsp__inst_executed.sum)"
  done
fi
echo "DeepGEMM done at $SECONDS s"
for t in cuda device_api; do xz -dc .devx/mid/$t.xz > .devx/mid/$t && chmod +x .devx/mid/$t
  OUT=$R T=.devx/mid/$t TEST_TIMEOUT=150 bash ci/h200/tests.sh; echo "mid $t tests rc=$? ($SECONDS s)"; done
echo "done at $SECONDS s"
