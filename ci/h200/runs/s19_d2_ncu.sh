#!/usr/bin/env bash
# Session 19: ncu of the crate's one-consumer tiles beside DeepGEMM at M=64/128 N=4096 K=7168.
set -u
FINAL_OUT=$OUT; OUT=/tmp/rn; rm -rf $OUT; mkdir -p $OUT
D=.device-bin/diag
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
( bash .peers/build_deepgemm.sh > $OUT/dg_build.log 2>&1 ) &
dgb=$!
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,lts__t_sectors_srcnode_gpc_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__average_gcomp_input_sector_success_rate.pct"
prof() { local tag=$1 kern=$2; shift 2; timeout 150 $NCU --set full --metrics $M --clock-control none --import-source no --kernel-name "regex:$kern" --launch-skip 3 --launch-count 1 -o $OUT/rep_$tag "$@" > $OUT/ncu_$tag.log 2>&1; echo "$tag rc=$?"
  $NCU -i $OUT/rep_$tag.ncu-rep --page details > $OUT/details_$tag.txt 2>&1; $NCU -i $OUT/rep_$tag.ncu-rep --page raw --csv > $OUT/raw_$tag.csv 2>&1; rm -f $OUT/rep_$tag.ncu-rep; }
prof ours128 sm90_gemm_block_fp8_m64n64w4s8 $D/b0 bench --backend cuda --mnk 128,4096,7168 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
prof ours64 sm90_gemm_block_fp8_m64n32w4s12 $D/b0 bench --backend cuda --mnk 64,4096,7168 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
prof ours128nw sm90_gemm_block_fp8_m64n64w4s8 $D/NO_WGMMA bench --backend cuda --mnk 128,4096,7168 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
wait $dgb
export PYTHONPATH=/tmp/dgb/dg
prof dg128 fp8_gemm python3 .device-bin/deepgemm_time.py --json /tmp/x.json --mnk 128,4096,7168
prof dg64 fp8_gemm python3 .device-bin/deepgemm_time.py --json /tmp/x.json --mnk 64,4096,7168
cd $OUT && tar czf $FINAL_OUT/r.tgz *
