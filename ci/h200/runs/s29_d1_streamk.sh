#!/usr/bin/env bash
# Session 29, call 1 (H200, $OUT set): the stream-K tail (src/backend/cuda/stream_k.rs).
# 1. GPU tests: the stream-K test, the GEMM tests that run the two-consumer tiles, split-K relaunches,
#    and the device-API tests (the plan's scratch area is new).
# 2. A/B in one binary: BLOCKFP8_STREAM_K=0 (whole tiles, as before) against the default (tails),
#    three interleaved rounds on the large-M race shapes and two small-M controls.
# 3. A checked bench (calc_diff) of the same shapes with tails, plus ragged ones.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
timeout 240 $B/cuda-default --include-ignored --test-threads 4 stream_k two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config split_k_relaunches > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E "^test |test result" $R/tests.txt | tail -12
timeout 120 $B/device_api --include-ignored --test-threads 2 > $R/device_api.txt 2>&1; echo "device_api rc=$?"; grep "test result" $R/device_api.txt
S="--mnk 1024,4096,7168 --mnk 1024,18432,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048 --mnk 128,18432,7168 --mnk 64,4096,7168"
for r in 1 2 3; do
  timeout 100 env BLOCKFP8_STREAM_K=0 $B/blockfp8 bench --backend cuda --no-progress --no-check --json $S > $R/off_$r.json 2> $R/off_$r.err; echo "$r off rc=$?"
  timeout 100 $B/blockfp8 bench --backend cuda --no-progress --no-check --json $S > $R/on_$r.json 2> $R/on_$r.err; echo "$r on rc=$?"
done
python3 $B/ab_compare.py $R/off_1.json,$R/off_2.json,$R/off_3.json $R/on_1.json,$R/on_2.json,$R/on_3.json | tee $R/ab.md
timeout 150 $B/blockfp8 bench --backend cuda --no-progress --json --warmup 1 --repeats 3 $S --mnk 4000,2112,7168 --mnk 3000,7000,2000 > $R/check.json 2> $R/check.err; echo "check rc=$?"
python3 -c "import json; d=json.load(open('$R/check.json')); print('calc_diff max', max(x.get('calc_diff') or 0 for s in d['shapes'] for x in s['measurements']))"
tar czf $OUT/r.tgz -C $OUT r
