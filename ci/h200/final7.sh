#!/bin/bash
# Seventh session's final table (BENCHMARKS.md), after the 128x256 tile: final6.sh, with more
# time for the sweep over the larger tuning set.
BENCH_TIMEOUT=${BENCH_TIMEOUT:-220} bash "$(dirname "$0")/final6.sh"
