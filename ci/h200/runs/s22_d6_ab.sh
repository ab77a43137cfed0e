#!/usr/bin/env bash
# Session 22, call 6 (H200): the TMA thread's first work item computed before the barrier
# set-up (this commit) against the build before it (.device-bin/blockfp8-before, the default
# build of 7b9244f): the default build's CUDA suite, then both CLIs through the shipped
# configs on the 20 race shapes in two interleaved rounds, then the race (race.sh).
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
T=$B/cuda-default OUT=$R TEST_TIMEOUT=200 bash $B/tests.sh; pack
shapes="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
for r in 1 2; do for v in before after; do
  bin=$B/blockfp8; [ $v = before ] && bin=$B/blockfp8-before
  timeout 90 $bin bench --backend cuda --no-progress --no-check --json "${args[@]}" > $R/ab_${v}_$r.json 2> $R/ab_${v}_$r.err
  echo "ab $v $r rc=$?"
done; done
pack
mkdir -p $R/race && OUT=$R/race bash $B/race.sh > $R/race.log 2>&1; echo "race rc=$?"
pack
