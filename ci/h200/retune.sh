#!/usr/bin/env bash
# On two H200s ($OUT set): re-tunes the DeepSeek-V3 weight shapes at tp 8 and tp 1 with the
# default build's `blockfp8` (its compiled tiles are the candidates), one worker per GPU, into
# retuned_tp8/ and retuned_tp1/ ($OUT/retuned.tgz), then benches the large-M anchors through
# the tp-8 files. Join the two folders with `blockfp8 config merge --keep-faster`; the merged
# entries replace the same M in configs/ (configs/README.md). An interrupted run resumes from
# the journal in its folder when started again.
# Usage: [TPS="8 1"] [DEVICES=0,1] [BATCH=1,2,...] [TUNE_TIMEOUT=240] bash .device-bin/retune.sh
#   TPS: the tensor-parallel sizes to tune (default "8 1"; tp 2 and 4 were tuned on one GPU
#   with TPS="2 4" DEVICES=0). BATCH: the batch sizes (default: vLLM's 18); M >= 256 was last
#   re-tuned with BATCH=256,512,1024,1536,2048,3072,4096.
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"  # (a folder the caller named but did not make)
B=.device-bin
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm --format=csv > "$OUT/gpu.txt"; date -u >> "$OUT/gpu.txt"
batch=()
[ -n "${BATCH:-}" ] && batch=(--batch-size "$BATCH")
tps=${TPS:-8 1}
for tp in $tps; do
    t0=$(date +%s)
    timeout "${TUNE_TIMEOUT:-240}" $B/blockfp8 tune --backend cuda --model deepseek-v3 --tp-size $tp "${batch[@]}" --devices "${DEVICES:-0,1}" \
        --save-path retuned_tp$tp --no-progress > "$OUT/tune_tp$tp.log" 2>&1
    echo "rc=$? wall_s=$(( $(date +%s) - t0 ))" >> "$OUT/tune_tp$tp.log"
    tail -2 "$OUT/tune_tp$tp.log"
done
tar czf "$OUT/retuned.tgz" $(for tp in $tps; do echo retuned_tp$tp; done)
[ "${BENCH:-1}" = 1 ] || exit 0
first=${tps%% *}
timeout 60 $B/blockfp8 bench --backend cuda --config-dir retuned_tp$first --mnk 512,4096,7168 --mnk 1024,4096,7168 --mnk 2048,4096,7168 \
    --mnk 4096,4096,7168 --mnk 1024,24576,1536 --no-progress > "$OUT/cli_bench_tp$first.txt" 2>&1
echo "rc=$?" >> "$OUT/cli_bench_tp$first.txt"
grep -E "Average speedup" "$OUT/cli_bench_tp$first.txt"
