#!/usr/bin/env bash
# Session 28, call 1 (H200, $OUT set; .devx and .peers carried).
# .devx/n176: CLI + cuda test binary with the 128x176 tile (K loop unrolled over the ring, as
#   128x192), its embedded N=2112 K=7168 file naming 128x176 s4 at M=4096;
# .devx/n176r: the same CLI with -DBLOCKFP8_N176_UNROLL=0 (176's K loop block by block);
# .devx/cfg-before: the N=2112 K=7168 file before (128x192 s4 at M=4096);
# .devx/pairdiag: the n176 CLI with an extra embedded entry M=4095 at N=4096 K=7168 naming
#   128x256 s4 in CTA pairs (blockfp8_cluster 2); .devx/cfg-n4096 the shipped file without it.
# 1) the GEMM GPU tests of n176 (every_compiled_config covers 128x176);
# 2) A/B, three interleaved rounds: N=2112 shapes through cfg-before (192) / shipped (176) /
#    n176r shipped (176 rolled);
# 3) pairs against singles at M=4095 N=4096 K=7168 (timing, then ncu --set full one launch each),
#    and DeepGEMM's DRAM/L2 bytes at 4096x4096x7168 under ncu.
set -u
R=$OUT/r; mkdir -p $R
for v in n176 n176r pairdiag; do xz -d -T4 .devx/$v/*.xz; chmod +x .devx/$v/*; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
( bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$?" >> $R/dg_build.log ) &
dgb=$!
timeout 200 .devx/n176/cuda --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/tests.log 2>&1; echo "tests rc=$?" >> $R/tests.log
grep -E "test result|panicked|FAILED|rc=" $R/tests.log | head -8
s2112="--mnk 4096,2112,7168 --mnk 3840,2112,7168 --mnk 4096,4096,7168"
for r in 1 2 3; do
  timeout 60 .devx/n176/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir .devx/cfg-before $s2112 > $R/before_$r.json 2> $R/before_$r.err; echo "$r before rc=$?"
  timeout 60 .devx/n176/blockfp8 bench --backend cuda --no-progress --no-check --json $s2112 > $R/unr_$r.json 2> $R/unr_$r.err; echo "$r unrolled rc=$?"
  timeout 60 .devx/n176r/blockfp8 bench --backend cuda --no-progress --no-check --json $s2112 > $R/rol_$r.json 2> $R/rol_$r.err; echo "$r rolled rc=$?"
done
for v in unr rol; do
  echo "== $v over before"
  python3 ci/h200/ab_compare.py $R/before_1.json,$R/before_2.json,$R/before_3.json $R/${v}_1.json,$R/${v}_2.json,$R/${v}_3.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
# calc_diff of the 176 path at the N=2112 shapes (checked run)
timeout 90 .devx/n176/blockfp8 bench --backend cuda --no-progress --json --mnk 4096,2112,7168 --mnk 3840,2112,7168 --mnk 4000,2112,7168 > $R/check176.json 2> $R/check176.err; echo "check rc=$?"
grep -o '"calc_diff[^,]*' $R/check176.json | sort | uniq -c | head
p="--mnk 4095,4096,7168"
for r in 1 2; do
  timeout 60 .devx/pairdiag/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir .devx/cfg-n4096 $p > $R/single_$r.json 2>&1; echo "$r single rc=$?"
  timeout 60 .devx/pairdiag/blockfp8 bench --backend cuda --no-progress --no-check --json $p > $R/pair_$r.json 2>&1; echo "$r pair rc=$?"
done
echo "== pairs over singles"; python3 ci/h200/ab_compare.py $R/single_1.json,$R/single_2.json $R/pair_1.json,$R/pair_2.json | tee $R/ab_pair.md | grep -E "tuned|geomean"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
prof() { local tag=$1 kern=$2 set=$3; shift 3; timeout 120 $NCU $set --clock-control none --import-source no --kernel-name "regex:$kern" --launch-skip 3 --launch-count 1 -o $R/rep_$tag "$@" > $R/ncu_$tag.log 2>&1; echo "$tag ncu rc=$?"
  $NCU -i $R/rep_$tag.ncu-rep --page details > $R/details_$tag.txt 2>&1; $NCU -i $R/rep_$tag.ncu-rep --page raw --csv > $R/raw_$tag.csv 2>&1; rm -f $R/rep_$tag.ncu-rep; }
prof single sm90_gemm_block_fp8_m128n256w8s4_ "--set full" .devx/pairdiag/blockfp8 bench --backend cuda --config-dir .devx/cfg-n4096 $p --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
prof pair sm90_gemm_block_fp8_m128n256w8s4c2 "--set full" .devx/pairdiag/blockfp8 bench --backend cuda $p --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
wait $dgb; tail -2 $R/dg_build.log
met="--metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,smsp__inst_executed.sum,gpc__cycles_elapsed.max,sm__throughput.avg.pct_of_peak_sustained_elapsed"
PYTHONPATH=/tmp/dgb/dg prof dg fp8_gemm "$met" python3 ci/h200/deepgemm_time.py --json /tmp/x.json --mnk 4096,4096,7168
for t in single pair; do
  echo "== $t"; grep -E "^    (Duration|Elapsed Cycles|SM Frequency|DRAM Throughput|L2 Cache Throughput|Executed Ipc Active|Compute \(SM\) Throughput|Memory Throughput)|One or More Eligible|Issued Warp|Warp Cycles Per Issued" $R/details_$t.txt | head -14
done
python3 - $R <<'PY'
import csv, sys
R = sys.argv[1]
keys = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "lts__t_sectors_srcunit_tex_op_read.sum", "smsp__inst_executed.sum", "gpc__cycles_elapsed.max", "gpu__time_duration.sum"]
for t in ["single", "pair", "dg"]:
    try:
        rows = list(csv.reader(open(f"{R}/raw_{t}.csv")))
        hi = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
        h, u, v = rows[hi], rows[hi + 1], rows[hi + 2]
        print(t, {k: (v[h.index(k)] + " " + u[h.index(k)]) for k in keys if k in h})
    except Exception as e:
        print(t, "n/a", e)
PY
date -u >> $R/gpu.txt
tar czf $OUT/r.tgz -C $OUT r
