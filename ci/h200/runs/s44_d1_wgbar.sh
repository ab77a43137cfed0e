#!/usr/bin/env bash
# Prepared in session 43 for the next session (not run: no device was lent after its call 4).
# (1) The consumer warpgroups' C barriers split, build .devx/s43l15 with its cuda and device_api
# test binaries (s43_l15_wgbar_staged.patch = s43_l14_wgbar.patch, the C buffer's C_FREE / C_FULL
# per consumer warpgroup with the signalling side arrive-only, plus the staged C's barrier split
# into each warpgroup's arrival once its wgmmas are done with the stage and the other's wait,
# double-buffered by tile parity): the GPU tests, then ncu_ab against the shipped source built
# plainly (.devx/s43head) and both CLIs' benches alternated three times. 128x192 s4 and 128x256
# s3 shapes see only the first part (C buffer, store warp), 128x256 s4 shapes (4096x4096x7168,
# 4096x7168x16384) only the second (staged C). (2) No-load, the CTA's last C not stored (s43v12,
# s43_v12_nolast.patch) and as built under a plain launch (BLOCKFP8_PDL=0: no programmatic
# dependent launch, so griddepcontrol.wait has nothing to wait for) against as built (s42noab),
# ncu fixed clock.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r6; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
MET=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
met() { grep -o "\"$2\",\"[a-z]*\",\"[0-9.,]*\"" "$1" | grep -o '[0-9.,]*"$' | tr -d '",'; }
for f in .devx/s43l15/*.xz .devx/s43head/blockfp8.xz .devx/s42noab/blockfp8.xz .devx/s43v12/blockfp8.xz; do xz -dkf $f && chmod +x ${f%.xz}; done
for t in cuda device_api; do OUT=$R T=.devx/s43l15/$t TEST_TIMEOUT=240 bash ci/h200/tests.sh; done
OUT=$R/ncu CLI_A=.devx/s43head/blockfp8 CLI_B=.devx/s43l15/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 2816,2112,7168 1024,18432,7168 4096,7168,2048 4096,4096,7168 > $R/ncu_ab.log 2>&1
grep "^|" $R/ncu/ncu_ab.md | grep -v inst_exec
L="4096,2112,7168 2816,2112,7168 1024,18432,7168 4096,4096,7168 4096,7168,16384 4096,7168,2048 4096,24576,1536"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do for v in s43head s43l15; do
  .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
done; done
python3 ci/h200/ab_compare.py $(ls $R/t_s43head_*.json | paste -sd,) $(ls $R/t_s43l15_*.json | paste -sd,) | tee $R/timed_ab.md | grep -v kernel_default
SHAPES="1408,2112,3584 2816,2112,3584"
C=/tmp/cfg6; for s in $SHAPES; do python3 ci/h200/force_tile.py $C --tile m128n192w8s4 --group 8 --mnk $s > /dev/null; done
for r in 1 2; do for v in s42noab s43v12 s42noab-nopdl; do for s in $SHAPES; do f=$R/${v}_${s//,/x}_$r.csv
  pdl=1; [ $v = s42noab-nopdl ] && pdl=0
  BLOCKFP8_PDL=$pdl timeout 120 "$NCU" --metrics $MET --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 1 .devx/${v%-nopdl}/blockfp8 bench --backend cuda \
    --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk $s --config-dir $C > $f 2>/dev/null
  echo "$v $s $(met $f gpc__cycles_elapsed.max) $(met $f sm__cycles_active.avg) $(met $f smsp__inst_executed.sum)"
done; done; done | tee $R/noload.txt
tar czf $OUT/r6.tgz -C /tmp r6
