#!/usr/bin/env bash
# Session 40, device call 7: where a 128x192 CTA's cycles outside its K loops go. A diagnostic
# build (s40_edges.patch on the shipped kernel; the thirty-ninth session's stamps plus kernel
# entry, the store warp's last stores read and written, and %globaltimer at entry and end) at
# 4096x2112x7168 and 1024x18432x7168, plain and under ncu's fixed clock; the DIAG lines come back.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT/r; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
xz -dkf .devx/s40d/blockfp8.xz && chmod +x .devx/s40d/blockfp8
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
for s in 4096,2112,7168 1024,18432,7168; do
  .devx/s40d/blockfp8 "${bench[@]}" --mnk $s > $R/plain_${s//,/x}.md 2> $R/plain_${s//,/x}.diag
  "$NCU" --metrics gpc__cycles_elapsed.max,sm__cycles_active.max --kernel-name "regex:m128n192" --launch-count 1 \
    .devx/s40d/blockfp8 "${bench[@]}" --mnk $s > $R/ncu_${s//,/x}.txt 2> $R/ncu_${s//,/x}.diag
  echo "$s rc=$?"
done
for f in $R/*.diag; do grep "^DIAG " $f | tail -1 > $f.last; mv $f.last $f; done
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
