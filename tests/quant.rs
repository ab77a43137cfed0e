//! CPU quantizers against float64 computations on ragged shapes, both flavours, both
//! scale layouts, UE8M0, partial groups and blocks, and bad input.

mod common;

use blockfp8::quant::{quantize_per_token_group, quantize_weight_blocks, ScaleLayout, TokenQuantOptions, PADDING_SCALE, SCALE_EPS};
use blockfp8::{Error, Fp8Format};
use common::{decode_fp8_f64, random_activations, random_weights};

const FORMATS: [Fp8Format; 2] = [Fp8Format::E4m3fn, Fp8Format::E4m3fnuz];

/// Finite non-negative fp8 values, ascending.
fn grid(f: Fp8Format) -> Vec<f64> {
    let mut v: Vec<f64> = (0u8..0x80).map(|b| decode_fp8_f64(f, b)).filter(|v| !v.is_nan()).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

/// Asserts that fp8 code `q` holds the representable value nearest to t = x / s (computed
/// in f64), within half the local fp8 spacing; t beyond the max must saturate.
fn assert_nearest(f: Fp8Format, grid: &[f64], t: f64, q: u8, what: &dyn Fn() -> String) {
    let v = decode_fp8_f64(f, q);
    assert!(!v.is_nan(), "{}: NaN code {q:#04x}", what());
    let a = t.abs();
    let max = *grid.last().unwrap();
    if a >= max {
        assert_eq!(v.abs(), max, "{}: t = {t} must saturate", what());
    } else {
        let i = grid.partition_point(|&g| g <= a); // grid[i-1] <= a < grid[i]
        let half_gap = (grid[i] - grid[i - 1]) / 2.0;
        // x / s is rounded to f32 before encoding, hence the relative slack.
        assert!((v.abs() - a).abs() <= half_gap * (1.0 + 1e-6), "{}: t = {t}, got {v} (spacing {})", what(), 2.0 * half_gap);
    }
    if v != 0.0 {
        assert_eq!(v < 0.0, t < 0.0, "{}: sign of {v} for t = {t}", what());
    }
}

fn check_token_quant(m: usize, k: usize, group: usize, f: Fp8Format, fp8_max: Option<f32>, ue8m0: bool, seed: u64) {
    let x = random_activations(m, k, seed);
    let mut opts = TokenQuantOptions::new(f);
    opts.group = group;
    opts.fp8_max = fp8_max;
    opts.ue8m0 = ue8m0;
    let qt = quantize_per_token_group(&x, m, k, &opts).unwrap();
    let groups = k.div_ceil(group);
    assert_eq!((qt.q.len(), qt.scales.len(), qt.groups()), (m * k, m * groups, groups));
    let fp8_max = fp8_max.unwrap_or(f.default_activation_max()) as f64;
    let g = grid(f);
    for row in 0..m {
        for gi in 0..groups {
            let cols = gi * group..((gi + 1) * group).min(k);
            let amax = cols.clone().map(|c| (x[row * k + c] as f64).abs()).fold(0.0, f64::max);
            let exact = (amax.max(SCALE_EPS as f64) / fp8_max) as f32;
            let s = qt.scales[row * groups + gi];
            if ue8m0 {
                let want = 2f64.powf((exact as f64).log2().ceil());
                assert_eq!(s as f64, want, "UE8M0 scale row {row} group {gi}: exact {exact}");
                assert!(s >= exact && (s as f64) < 2.0 * exact as f64);
            } else {
                assert_eq!(s, exact, "scale row {row} group {gi}");
            }
            let mut amax_code_seen = false;
            for c in cols {
                let xv = x[row * k + c] as f64;
                let q = qt.q[row * k + c];
                assert_nearest(f, &g, xv / s as f64, q, &|| format!("{f} m={m} k={k} x[{row},{c}]"));
                if xv.abs() == amax && amax > 0.0 && !ue8m0 && g.contains(&fp8_max) {
                    // The group's largest magnitude lands exactly on the fp8 max.
                    assert_eq!(decode_fp8_f64(f, q).abs(), fp8_max, "{f} x[{row},{c}] = amax");
                    amax_code_seen = true;
                }
                if ue8m0 {
                    assert!(decode_fp8_f64(f, q).abs() <= fp8_max, "UE8M0 scales never saturate");
                }
            }
            assert!(ue8m0 || amax == 0.0 || amax_code_seen || !g.contains(&fp8_max));
        }
    }
    // dequantize() = q * s.
    let deq = qt.dequantize();
    for i in (0..m * k).step_by(7) {
        let want = decode_fp8_f64(f, qt.q[i]) * qt.scales[(i / k) * groups + (i % k) / group] as f64;
        assert_eq!(deq[i], want as f32, "f32 product is the rounded exact product");
    }
}

#[test]
fn per_token_group_matches_f64_on_ragged_k() {
    let mut seed = 1;
    for f in FORMATS {
        for (m, k) in [(3, 200), (17, 1280), (1, 7168), (5, 1), (100, 1280), (4, 129)] {
            seed += 1;
            check_token_quant(m, k, 128, f, None, false, seed);
        }
    }
}

#[test]
fn per_token_group_other_groups_and_fp8_max() {
    check_token_quant(9, 1000, 64, Fp8Format::E4m3fn, None, false, 40);
    check_token_quant(9, 300, 7, Fp8Format::E4m3fnuz, Some(240.0), false, 41);
    check_token_quant(2, 50, 128, Fp8Format::E4m3fn, Some(100.0), false, 42);
}

#[test]
fn per_token_group_ue8m0_scales_are_powers_of_two() {
    for f in FORMATS {
        check_token_quant(17, 1280, 128, f, None, true, 50);
        check_token_quant(3, 200, 128, f, None, true, 51);
    }
}

#[test]
fn column_major_scales_are_m_major_and_padded() {
    for f in FORMATS {
        for (m, k) in [(1, 200), (3, 1280), (17, 7168), (100, 129), (8, 256)] {
            let x = random_activations(m, k, (m * 31 + k) as u64);
            let mut opts = TokenQuantOptions::new(f);
            let row = quantize_per_token_group(&x, m, k, &opts).unwrap();
            opts.layout = ScaleLayout::ColumnMajor;
            let col = quantize_per_token_group(&x, m, k, &opts).unwrap();
            let (groups, padded_m) = (k.div_ceil(128), m.div_ceil(4) * 4);
            assert_eq!(col.padded_m(), padded_m);
            assert_eq!(col.scales.len(), groups * padded_m);
            assert_eq!(col.q, row.q);
            for g in 0..groups {
                for r in 0..padded_m {
                    let got = col.scales[g * padded_m + r];
                    if r < m {
                        assert_eq!(got, row.scales[r * groups + g], "m={m} k={k} row {r} group {g}");
                        assert_eq!(col.scale(r, g), row.scale(r, g));
                    } else {
                        assert_eq!(got, PADDING_SCALE, "padding row {r} group {g}");
                    }
                }
            }
            assert_eq!(col.dequantize(), row.dequantize());
        }
    }
}

#[test]
fn all_zero_group_gets_eps_scale_and_zero_codes() {
    for f in FORMATS {
        let mut x = vec![0.0f32; 2 * 256];
        x[456] = 3.5; // row 1, column 200: second group
        let qt = quantize_per_token_group(&x, 2, 256, &TokenQuantOptions::new(f)).unwrap();
        let eps_scale = SCALE_EPS / f.default_activation_max();
        assert_eq!(qt.scales, vec![eps_scale, eps_scale, eps_scale, 3.5 / f.default_activation_max()]);
        assert!(qt.q.iter().enumerate().all(|(i, &b)| (i == 456) == (b != 0)));
    }
}

#[test]
fn token_quant_rejects_bad_input() {
    let f = Fp8Format::E4m3fn;
    let opts = TokenQuantOptions::new(f);
    let mut x = random_activations(4, 200, 9);
    assert!(matches!(quantize_per_token_group(&x, 4, 201, &opts), Err(Error::Shape { .. })));
    assert!(matches!(quantize_per_token_group(&x[..799], 4, 200, &opts), Err(Error::Shape { .. })));
    assert!(matches!(quantize_per_token_group(&x, usize::MAX, 2, &opts), Err(Error::Shape { .. })));
    let mut zero_group = opts.clone();
    zero_group.group = 0;
    assert!(matches!(quantize_per_token_group(&x, 4, 200, &zero_group), Err(Error::InvalidArgument { .. })));
    for bad_max in [0.0, -1.0, 449.0, f32::NAN, f32::INFINITY] {
        let mut o = opts.clone();
        o.fp8_max = Some(bad_max);
        assert!(matches!(quantize_per_token_group(&x, 4, 200, &o), Err(Error::InvalidArgument { .. })), "fp8 max {bad_max}");
    }
    let mut o = TokenQuantOptions::new(Fp8Format::E4m3fnuz);
    o.fp8_max = Some(241.0);
    assert!(quantize_per_token_group(&x, 4, 200, &o).is_err(), "fnuz max is 240");

    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        x[2 * 200 + 5] = bad;
        match quantize_per_token_group(&x, 4, 200, &opts) {
            Err(e @ Error::NonFinite { .. }) => assert!(e.to_string().contains("x[2, 5]"), "{e}"),
            other => panic!("{bad}: expected NonFinite, got {other:?}"),
        }
    }
    // The first bad element is named, whatever the threads do.
    x[3 * 200 + 199] = f32::NAN;
    x[2 * 200 + 5] = 1.0;
    x[0] = f32::INFINITY;
    let e = quantize_per_token_group(&x, 4, 200, &opts).unwrap_err();
    assert!(e.to_string().contains("x[0, 0]"), "{e}");
}

#[test]
fn empty_inputs_quantize_to_empty_outputs() {
    let opts = TokenQuantOptions::new(Fp8Format::E4m3fn);
    let qt = quantize_per_token_group(&[], 0, 128, &opts).unwrap();
    assert!(qt.q.is_empty() && qt.scales.is_empty());
}

fn check_weight_quant(n: usize, k: usize, block: (usize, usize), f: Fp8Format, seed: u64) {
    let w = random_weights(n, k, seed);
    let qw = quantize_weight_blocks(&w, n, k, block, f).unwrap();
    let (nb, kb) = (n.div_ceil(block.0), k.div_ceil(block.1));
    assert_eq!((qw.q.len(), qw.scales.len()), (n * k, nb * kb));
    let g = grid(f);
    let max = f.max_finite() as f64;
    for bi in 0..nb {
        for bj in 0..kb {
            let rows = bi * block.0..((bi + 1) * block.0).min(n);
            let cols = bj * block.1..((bj + 1) * block.1).min(k);
            let mut amax = 0.0f64;
            for r in rows.clone() {
                for c in cols.clone() {
                    amax = amax.max((w[r * k + c] as f64).abs());
                }
            }
            let s = qw.scales[bi * kb + bj];
            assert_eq!(s, (amax.max(SCALE_EPS as f64) / max) as f32, "{f} block ({bi},{bj})");
            let mut hit_max = false;
            for r in rows.clone() {
                for c in cols.clone() {
                    let q = qw.q[r * k + c];
                    assert_nearest(f, &g, w[r * k + c] as f64 / s as f64, q, &|| format!("{f} n={n} k={k} w[{r},{c}]"));
                    hit_max |= (w[r * k + c] as f64).abs() == amax && decode_fp8_f64(f, q).abs() == max;
                    assert_eq!(qw.scale_of(r, c), s);
                }
            }
            assert!(hit_max || amax == 0.0, "block ({bi},{bj}) amax must map to {max}");
        }
    }
}

#[test]
fn weight_blocks_match_f64_with_partial_edge_blocks() {
    for f in FORMATS {
        check_weight_quant(129, 200, (128, 128), f, 60);
        check_weight_quant(576, 1280, (128, 128), f, 61);
        check_weight_quant(130, 7168, (128, 128), f, 62);
        check_weight_quant(1, 1, (128, 128), f, 63);
        check_weight_quant(100, 300, (64, 100), f, 64);
        check_weight_quant(7, 9, (2, 4), f, 65);
    }
}

#[test]
fn weight_conversion_to_fnuz_keeps_dequantized_values() {
    let (n, k) = (300, 520);
    let mut w = random_weights(n, k, 70);
    w[5] = -0.0; // encodes to 0x80 in e4m3fn
    let mut qw = quantize_weight_blocks(&w, n, k, (128, 128), Fp8Format::E4m3fn).unwrap();
    assert!(qw.q.contains(&0x80));
    let before = qw.dequantize();
    qw.convert_to_fnuz().unwrap();
    assert_eq!(qw.format, Fp8Format::E4m3fnuz);
    assert!(!qw.q.contains(&0x80));
    assert_eq!(qw.dequantize(), before);
    assert!(qw.convert_to_fnuz().is_err(), "already fnuz");
}

#[test]
fn weight_quant_rejects_bad_input() {
    let f = Fp8Format::E4m3fnuz;
    let mut w = random_weights(10, 20, 80);
    assert!(matches!(quantize_weight_blocks(&w, 10, 21, (128, 128), f), Err(Error::Shape { .. })));
    assert!(matches!(quantize_weight_blocks(&w, 10, 20, (0, 128), f), Err(Error::InvalidArgument { .. })));
    assert!(matches!(quantize_weight_blocks(&w, 10, 20, (128, 0), f), Err(Error::InvalidArgument { .. })));
    w[7 * 20 + 13] = f32::NAN;
    let e = quantize_weight_blocks(&w, 10, 20, (128, 128), f).unwrap_err();
    assert!(matches!(e, Error::NonFinite { .. }) && e.to_string().contains("w[7, 13]"), "{e}");
}
