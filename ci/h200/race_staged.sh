#!/usr/bin/env bash
# On the H200 ($OUT set): the race of record with a build staged by stage_variant.sh, in one
# device call. Unpacks .devx/NAME, runs its cuda and device_api test binaries with the GPU tests
# (SKIP_TESTS=1 skips them, for a build whose tests already passed on the H200), then race.sh
# with DeepGEMM paired (PAIRED_PASSES passes, default 3) inside what is left of RACE_BUDGET
# seconds (default 590, under the device's 600 s a command), then, with over 100 s left, alone.sh
# (each kernel alone at the large-M shapes; ALONE_PASSES=0 skips it). Carry .devx/NAME and
# .peers. Results: $OUT/summary.md, $OUT/race.log, $OUT/race.md (the table for BENCHMARKS.md),
# $OUT/alone.md and $OUT/results.tgz (every log and JSON; the device returns at most 8 files).
# Usage: [SKIP_TESTS=1] [PAIRED_PASSES=3] [RACE_BUDGET=590] [ALONE_PASSES=3] bash ci/h200/race_staged.sh NAME
set -u
: "${OUT:?set OUT to the results folder}"
name=${1:?usage: bash ci/h200/race_staged.sh NAME (a folder of .devx/)}
dir=.devx/$name
[ -f "$dir/blockfp8.xz" ] || { echo "race_staged: no staged build in $dir (stage_variant.sh $name)" >&2; exit 2; }
mkdir -p "$OUT" .device-bin
work=$(mktemp -d /tmp/race_staged.XXXXXX)
exec > >(tee "$OUT/summary.md") 2>&1
trap 'tar czf "$OUT/results.tgz" -C "$work" .' EXIT
echo "race_staged: $name = $(cat "$dir/SOURCE" 2> /dev/null || echo 'no SOURCE')"
for t in cuda device_api blockfp8 libblockfp8_capi.so; do
    xz -dc "$dir/$t.xz" > "$dir/$t" && chmod +x "$dir/$t" || { echo "race_staged: cannot unpack $dir/$t.xz" >&2; exit 2; }
done
if [ -z "${SKIP_TESTS:-}" ]; then
    for t in cuda device_api; do
        OUT=$work T=$dir/$t TEST_TIMEOUT=180 bash ci/h200/tests.sh
        rc=$?
        echo "$t tests rc=$rc ($SECONDS s)"
        [ $rc = 0 ] || { echo "race_staged: $t tests failed, no race"; exit 1; }
    done
fi
cp "$dir/blockfp8" "$dir/libblockfp8_capi.so" .device-bin/
left=$((${RACE_BUDGET:-590} - SECONDS))
echo "race with $left s left"
OUT=$work/race DG_MODE=paired PAIRED_PASSES=${PAIRED_PASSES:-3} timeout "$left" bash ci/h200/race.sh > "$work/race.log" 2>&1
echo "race rc=$? ($SECONDS s)" | tee -a "$work/race.log"
cp "$work/race.log" "$OUT/"
[ -f "$work/race/race.md" ] && cp "$work/race/race.md" "$OUT/"
tail -34 "$work/race.log"
# Then each kernel alone at the large-M shapes (alone.sh, DeepGEMM already built), with time left.
left=$((${RACE_BUDGET:-590} - SECONDS))
if [ "${ALONE_PASSES:-3}" -gt 0 ] && [ $left -gt 100 ]; then
    echo "alone with $left s left"
    OUT=$work timeout "$left" bash ci/h200/alone.sh > "$work/alone.log" 2>&1
    echo "alone rc=$? ($SECONDS s)"
    [ -f "$work/alone.md" ] && cp "$work/alone.md" "$OUT/" && cat "$work/alone.md"
fi
