#!/bin/bash
# Ninth session's final table (BENCHMARKS.md), after the opaque epilogue offsets: final6.sh
# (all GPU tests of the tuning build, the anchor bench with its sweep, now with the measured
# bytes floor column, then `blockfp8 bench` through the shipped configs), with time for the
# sweep over the tuning set.
BENCH_TIMEOUT=${BENCH_TIMEOUT:-240} bash "$(dirname "$0")/final6.sh"
rm -f $OUT/bench.log
