#!/bin/bash
# Tune DeepSeek-V3 (tp 8) across 4 nodes with 8 GPUs each, then merge.
#   sbatch --array=0-3 ci/cluster/slurm-array.sh
# then, when the array is done (or chain it: sbatch --dependency=afterok:<jobid> ...):
#   blockfp8 config merge --out configs/ tune-out/shard-*
#SBATCH --job-name=blockfp8-tune
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8
#SBATCH --time=02:00:00
#SBATCH --requeue
set -euo pipefail
SHARDS=${SLURM_ARRAY_TASK_COUNT:?run as an array job}
INDEX=${SLURM_ARRAY_TASK_ID:?run as an array job}
OUT=${TUNE_OUT:-tune-out}/shard-${INDEX}
mkdir -p "$OUT"
# A requeued or rerun task resumes from $OUT/tune-journal.shard${INDEX}of${SHARDS}.jsonl.
exec blockfp8 tune --model deepseek-v3 --tp-size 8 \
    --shard "${INDEX}/${SHARDS}" --save-path "$OUT"
