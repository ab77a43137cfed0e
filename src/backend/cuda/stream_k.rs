//! The stream-K tail of the two-consumer TMA tiles: when a GEMM's tiles leave the last round
//! of the persistent grid part-empty (4096x2112x7168 on 128x192: 352 tiles over 132 SMs, so a
//! third of the SMs idle through the third round), the last `tail_tiles` tiles' K blocks are
//! dealt out instead, `units` to each CTA in one contiguous range. A tile whose K range spans
//! several CTAs is finished by the one that holds its first K block: the others write their
//! fp32 sums to a slot of their own in the scratch area and raise a flag per consumer warp; it
//! adds them in K order (so the bits do not depend on timing) and stores C. Each CTA takes at
//! most two pieces: the end of one tile (its first; never waits) and the start of the next
//! (its last; the one that waits), so no CTA waits on a CTA that waits.
//!
//! The kernel (`cuda/gemm_sm90_tma.cuh`, `sk_tiles` / `sk_units`) walks work items
//! `0 .. dp + 2 * ctas`: items below `dp` are whole tiles, dealt round-robin; item
//! `dp + q * ctas + c` is piece q of CTA c's range. [`pieces`] is that arithmetic on the host.

/// Bytes at the end of the scratch area for the flags: one u32 per consumer warp of each CTA
/// (8 warps), for up to [`MAX_CTAS`] CTAs. Zero between launches: the finishing CTA clears
/// each flag it consumed.
pub const FLAG_BYTES: usize = MAX_CTAS * 8 * 4;
/// The most CTAs a stream-K launch may have (the flags are sized for them).
pub const MAX_CTAS: usize = 1024;
/// What a piece's hand-off costs, in K blocks (a CTA writes or reads one BM x BN fp32 tile
/// through L2: on the H200 about as long as one or two K blocks of the two-consumer tiles).
const FIXUP_COST_K_BLOCKS: u64 = 2;
/// The least gain, in parts per thousand of the whole-tile schedule, worth a tail.
const MIN_GAIN_PER_MILLE: u64 = 10;

/// A stream-K tail: the last `tail_tiles` tiles in `units` K blocks per CTA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tail {
    pub tail_tiles: u32,
    pub units: u32,
}

/// The tail for `tiles` tiles of `k_blocks` K blocks on `ctas` persistent CTAs (one per SM
/// slot), if it shortens the busiest CTA's work by at least 1% after the hand-offs: the whole
/// tiles fill `tiles / ctas` rounds, the rest (fewer than `ctas`) are dealt out by K block.
pub fn plan(tiles: u64, k_blocks: u64, ctas: u64) -> Option<Tail> {
    if ctas == 0 || ctas as usize > MAX_CTAS || k_blocks < 2 {
        return None;
    }
    let tail = tiles % ctas;
    if tail == 0 {
        return None;
    }
    let rounds = tiles / ctas;
    let units = (tail * k_blocks).div_ceil(ctas);
    let whole = (rounds + 1) * k_blocks;
    let streamed = rounds * k_blocks + units + FIXUP_COST_K_BLOCKS;
    if streamed * 1000 > whole * (1000 - MIN_GAIN_PER_MILLE) {
        return None;
    }
    Some(Tail {
        tail_tiles: u32::try_from(tail).ok()?,
        units: u32::try_from(units).ok()?,
    })
}

/// Bytes of scratch a stream-K launch of `ctas` CTAs on BM x BN tiles needs: one fp32 tile per
/// CTA, then the flags.
pub fn scratch_bytes(block_m: u32, block_n: u32, ctas: u64) -> usize {
    ctas as usize * block_m as usize * block_n as usize * 4 + FLAG_BYTES
}

/// One piece of a CTA's range: K blocks `[kb_begin, kb_begin + nkb)` of tail tile `tile`
/// (0 = the first tail tile).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub tile: u64,
    pub kb_begin: u64,
    pub nkb: u64,
}

impl Piece {
    /// Whether this piece finishes its tile (holds its first K block) rather than handing its
    /// sums to the CTA that does.
    pub fn finishes(&self) -> bool {
        self.kb_begin == 0
    }
}

/// Pieces 0 and 1 of CTA `cta`'s range, as the kernel's work items compute them (an empty
/// piece is None).
pub fn pieces(tail: Tail, k_blocks: u64, cta: u64) -> [Option<Piece>; 2] {
    let (units, total) = (tail.units as u64, tail.tail_tiles as u64 * k_blocks);
    let u0 = cta * units;
    let u1 = (u0 + units).min(total);
    let piece = |q: u64| {
        let t = u0 / k_blocks + q;
        let lo = u0.max(t * k_blocks);
        let hi = u1.min(t * k_blocks + k_blocks);
        (hi > lo).then(|| Piece {
            tile: t,
            kb_begin: lo - t * k_blocks,
            nkb: hi - lo,
        })
    };
    [piece(0), piece(1)]
}

/// The CTAs that hand their sums of tail tile `tile` to the CTA finishing it, in K order.
pub fn contributors(tail: Tail, k_blocks: u64, tile: u64) -> std::ops::RangeInclusive<u64> {
    let units = tail.units as u64;
    let first = tile * k_blocks / units;
    let last = ((tile + 1) * k_blocks - 1) / units;
    first + 1..=last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_is_planned_only_where_the_last_round_is_part_empty_enough() {
        // 4096x2112x7168 on 128x192: 352 tiles, 56 K blocks, 132 SMs: 88 tail tiles in 38
        // blocks per CTA, 2 * 56 + 38 + 2 against 3 * 56.
        assert_eq!(
            plan(352, 56, 132),
            Some(Tail {
                tail_tiles: 88,
                units: 38
            })
        );
        // Whole rounds, or a last round nearly full at short K, keep whole tiles.
        assert_eq!(plan(264, 56, 132), None);
        assert_eq!(plan(131, 4, 132), None);
        // One K block cannot be dealt out; no CTAs, or more than the flags hold, neither.
        assert_eq!(plan(200, 1, 132), None);
        assert_eq!(plan(200, 56, 0), None);
        assert_eq!(plan(2000, 56, MAX_CTAS as u64 + 1), None);
        // 4096x4096x7168 on 128x256: 512 tiles, 116 in the tail, 50 blocks per CTA.
        assert_eq!(
            plan(512, 56, 132),
            Some(Tail {
                tail_tiles: 116,
                units: 50
            })
        );
    }

    #[test]
    fn the_pieces_cover_every_tail_block_once_and_each_tile_is_finished_once() {
        for (tiles, kb, ctas) in [
            (352u64, 56u64, 132u64),
            (512, 56, 132),
            (3072, 12, 132),
            (896, 16, 132),
            (144, 8, 132),
            (40, 7, 33),
            (5, 100, 3),
        ] {
            let Some(tail) = plan(tiles, kb, ctas) else {
                continue;
            };
            let t = tail.tail_tiles as u64;
            let mut covered = vec![0u32; (t * kb) as usize];
            let mut finishers = vec![Vec::new(); t as usize];
            let mut handed = vec![0u32; ctas as usize];
            for c in 0..ctas {
                let ps = pieces(tail, kb, c);
                for p in ps.iter().flatten() {
                    assert!(
                        p.tile < t && p.kb_begin + p.nkb <= kb,
                        "{tiles}/{kb}/{ctas}: {p:?}"
                    );
                    for u in p.kb_begin..p.kb_begin + p.nkb {
                        covered[(p.tile * kb + u) as usize] += 1;
                    }
                    if p.finishes() {
                        finishers[p.tile as usize].push(c);
                    } else {
                        handed[c as usize] += 1;
                        // A hand-off is the CTA's first piece: it never waits before it.
                        assert_eq!(
                            ps[0],
                            Some(*p),
                            "{tiles}/{kb}/{ctas}: CTA {c} hands off its second piece"
                        );
                    }
                }
            }
            assert!(
                covered.iter().all(|&n| n == 1),
                "{tiles}/{kb}/{ctas}: a tail K block covered {:?} times",
                covered.iter().find(|&&n| n != 1)
            );
            assert!(
                handed.iter().all(|&n| n <= 1),
                "{tiles}/{kb}/{ctas}: a CTA needs two slots"
            );
            for (tile, f) in finishers.iter().enumerate() {
                assert_eq!(
                    f.len(),
                    1,
                    "{tiles}/{kb}/{ctas}: tile {tile} finished by {f:?}"
                );
                // The finishing CTA's contributors are exactly the CTAs holding the rest of the tile.
                let others: Vec<u64> = (0..ctas)
                    .filter(|&c| {
                        pieces(tail, kb, c)
                            .iter()
                            .flatten()
                            .any(|p| p.tile == tile as u64 && !p.finishes())
                    })
                    .collect();
                assert_eq!(
                    contributors(tail, kb, tile as u64).collect::<Vec<_>>(),
                    others,
                    "{tiles}/{kb}/{ctas}: tile {tile}"
                );
                assert!(
                    others.iter().all(|&c| c > f[0]),
                    "contributors come after the finishing CTA"
                );
            }
        }
    }
}
