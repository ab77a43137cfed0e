//! FP8 formats: exhaustive checks of both flavours over all 256 bit patterns and every
//! rounding boundary, against the independent bit-field decoder in tests/common.

mod common;

use blockfp8::formats::{convert_e4m3fn_bytes_to_fnuz, convert_e4m3fn_to_fnuz, convert_e4m3fn_to_fnuz_ue8m0};
use blockfp8::Fp8Format;
use common::{decode_fp8_f64, Rng};
use proptest::prelude::*;

const FORMATS: [Fp8Format; 2] = [Fp8Format::E4m3fn, Fp8Format::E4m3fnuz];

/// Next f32 away from zero / towards zero, for positive finite x (MSRV 1.85 has no next_up).
fn up(x: f32) -> f32 {
    f32::from_bits(x.to_bits() + 1)
}
fn down(x: f32) -> f32 {
    assert!(x > 0.0);
    f32::from_bits(x.to_bits() - 1)
}

/// (value, code) of every finite non-negative value of the flavour, ascending.
fn non_negative_values(f: Fp8Format) -> Vec<(f32, u8)> {
    let mut v: Vec<(f32, u8)> = (0u8..0x80).filter(|&b| !decode_fp8_f64(f, b).is_nan()).map(|b| (decode_fp8_f64(f, b) as f32, b)).collect();
    v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    v
}

/// The code `encode` must give for -|value| whose magnitude code is `mag`.
fn negative_code(f: Fp8Format, mag: u8) -> u8 {
    if mag == 0 && f == Fp8Format::E4m3fnuz {
        0x00
    } else {
        mag | 0x80
    }
}

#[test]
fn decode_matches_bit_field_formula_for_all_256_patterns() {
    for f in FORMATS {
        let table = f.decode_table();
        for b in 0..=255u8 {
            let want = decode_fp8_f64(f, b);
            let got = f.decode(b);
            if want.is_nan() {
                assert!(got.is_nan() && f.is_nan(b), "{f} {b:#04x}: want NaN, got {got}");
            } else {
                assert!(!f.is_nan(b), "{f} {b:#04x} is finite");
                assert_eq!(got as f64, want, "{f} {b:#04x}");
                assert_eq!(got.is_sign_negative(), b & 0x80 != 0, "{f} {b:#04x}: sign of {got}");
            }
            assert_eq!(table[b as usize].to_bits(), got.to_bits(), "{f} {b:#04x}: table differs from decode");
        }
    }
}

#[test]
fn flavour_facts_from_the_format_tables() {
    let fnf = Fp8Format::E4m3fn;
    let uz = Fp8Format::E4m3fnuz;
    // NaN patterns: fn 0x7F/0xFF, fnuz 0x80 only.
    assert_eq!((0..=255u8).filter(|&b| fnf.decode(b).is_nan()).collect::<Vec<_>>(), vec![0x7F, 0xFF]);
    assert_eq!((0..=255u8).filter(|&b| uz.decode(b).is_nan()).collect::<Vec<_>>(), vec![0x80]);
    // Max finite.
    let max_of = |f: Fp8Format| (0..=255u8).map(|b| f.decode(b)).filter(|v| !v.is_nan()).fold(f32::MIN, f32::max);
    assert_eq!(max_of(fnf), fnf.max_finite());
    assert_eq!(max_of(uz), uz.max_finite());
    assert_eq!((fnf.max_finite(), uz.max_finite()), (448.0, 240.0));
    assert_eq!((fnf.default_activation_max(), uz.default_activation_max()), (448.0, 224.0));
    // fnuz has no -0: the only zero is 0x00.
    assert_eq!((0..=255u8).filter(|&b| uz.decode(b) == 0.0).collect::<Vec<_>>(), vec![0x00]);
    assert_eq!((0..=255u8).filter(|&b| fnf.decode(b) == 0.0).collect::<Vec<_>>(), vec![0x00, 0x80]);
    // Smallest subnormal / normal.
    assert_eq!((fnf.decode(0x01), fnf.decode(0x08)), (2f32.powi(-9), 2f32.powi(-6)));
    assert_eq!((uz.decode(0x01), uz.decode(0x08)), (2f32.powi(-10), 2f32.powi(-7)));
    // The same finite pattern is worth half as much in fnuz.
    for b in (0..=255u8).filter(|&b| !fnf.is_nan(b) && !uz.is_nan(b)) {
        assert_eq!(uz.decode(b) * 2.0, fnf.decode(b), "{b:#04x}");
    }
}

#[test]
fn encode_of_decode_is_identity_for_every_non_nan_pattern() {
    for f in FORMATS {
        for b in (0..=255u8).filter(|&b| !f.is_nan(b)) {
            assert_eq!(f.encode(f.decode(b)), b, "{f} {b:#04x} ({})", f.decode(b));
        }
    }
}

#[test]
fn every_midpoint_rounds_to_even_and_neighbours_to_nearest() {
    for f in FORMATS {
        let vals = non_negative_values(f);
        assert_eq!(vals.len(), if f == Fp8Format::E4m3fn { 127 } else { 128 });
        for pair in vals.windows(2) {
            let ((lo, lo_code), (hi, hi_code)) = (pair[0], pair[1]);
            let mid = (lo + hi) / 2.0; // exact: 5 significant bits
            assert_eq!(mid as f64, (lo as f64 + hi as f64) / 2.0);
            // Adjacent codes differ by one, so exactly one of them has an even mantissa.
            let even = if lo_code % 2 == 0 { lo_code } else { hi_code };
            for (x, want) in [(mid, even), (up(mid), hi_code), (down(mid), lo_code), (lo, lo_code), (hi, hi_code)] {
                assert_eq!(f.encode(x), want, "{f}: encode({x:e}) between {lo} and {hi}");
                assert_eq!(f.encode(-x), negative_code(f, want), "{f}: encode({:e})", -x);
            }
        }
    }
}

#[test]
fn tiny_values_underflow_to_zero_with_the_flavours_sign_rule() {
    for f in FORMATS {
        let min_sub = f.decode(0x01);
        for x in [f32::from_bits(1), min_sub / 4.0, min_sub / 2.0] {
            assert_eq!(f.encode(x), 0x00, "{f} {x:e}");
            assert_eq!(f.encode(-x), negative_code(f, 0), "{f} {:e}", -x);
        }
        assert_eq!(f.encode(up(min_sub / 2.0)), 0x01, "{f}: just above half the smallest subnormal");
        assert_eq!(f.encode(0.0), 0x00);
        assert_eq!(f.encode(-0.0), negative_code(f, 0));
    }
}

#[test]
fn overflow_and_infinity_saturate_to_max() {
    for f in FORMATS {
        let max = f.max_finite();
        let max_code = f.encode(max);
        assert_eq!(f.decode(max_code), max);
        for x in [up(max), max * 1.03, max * 1.1, max * 2.0, 1e6, f32::MAX, f32::INFINITY] {
            assert_eq!(f.encode(x), max_code, "{f}: {x:e}");
            assert_eq!(f.encode(-x), max_code | 0x80, "{f}: {:e}", -x);
            assert!(!f.decode(f.encode(x)).is_nan());
        }
    }
}

#[test]
fn nan_encodes_to_the_flavours_nan() {
    for f in FORMATS {
        for x in [f32::NAN, -f32::NAN, f32::from_bits(0x7F80_0001), f32::from_bits(0xFFC0_1234)] {
            let b = f.encode(x);
            assert_eq!(b, f.nan_code(), "{f}: {x:?}");
            assert!(f.decode(b).is_nan());
        }
    }
    assert_eq!((Fp8Format::E4m3fn.nan_code(), Fp8Format::E4m3fnuz.nan_code()), (0x7F, 0x80));
}

#[test]
fn e4m3fn_encode_agrees_with_float8_crate_in_range() {
    let f = Fp8Format::E4m3fn;
    let check = |x: f32| {
        let ours = f.decode(f.encode(x));
        let theirs = f.decode(float8::F8E4M3::from_f32(x).to_bits());
        // float8 drops the sign of underflowed values; compare values, so -0 == +0.
        assert_eq!(ours, theirs, "x = {x:e}: ours {:#04x}, float8 {:#04x}", f.encode(x), float8::F8E4M3::from_f32(x).to_bits());
    };
    let vals = non_negative_values(f);
    for pair in vals.windows(2) {
        let mid = (pair[0].0 + pair[1].0) / 2.0;
        for x in [mid, up(mid), down(mid), pair[0].0] {
            check(x);
            check(-x);
        }
    }
    let mut rng = Rng::new(8);
    for _ in 0..200_000 {
        // Log-uniform magnitudes over the whole e4m3fn range and below it.
        let x = (2f64.powf(rng.range(-14.0, 8.8)) * if rng.uniform() < 0.5 { -1.0 } else { 1.0 }) as f32;
        if x.abs() <= 448.0 {
            check(x);
        }
    }
}

#[test]
fn slice_helpers_and_names() {
    let mut rng = Rng::new(3);
    let xs: Vec<f32> = (0..1000).map(|_| (rng.normal() * 50.0) as f32).collect();
    for f in FORMATS {
        let q = f.encode_slice(&xs);
        assert_eq!(q, xs.iter().map(|&x| f.encode(x)).collect::<Vec<_>>());
        let d = f.decode_slice(&q);
        assert_eq!(d, q.iter().map(|&b| f.decode(b)).collect::<Vec<_>>());
        assert_eq!(f.name().parse::<Fp8Format>().unwrap(), f);
    }
    assert!("e5m2".parse::<Fp8Format>().is_err());
}

#[test]
fn fn_to_fnuz_conversion_preserves_every_finite_value() {
    let (fnf, uz) = (Fp8Format::E4m3fn, Fp8Format::E4m3fnuz);
    let mut bytes: Vec<u8> = (0..=255u8).filter(|&b| !fnf.is_nan(b)).collect();
    let originals = bytes.clone();
    convert_e4m3fn_bytes_to_fnuz(&mut bytes);
    for (&b, &c) in originals.iter().zip(&bytes) {
        assert!(!uz.is_nan(c), "{b:#04x} became fnuz NaN");
        assert_eq!(uz.decode(c) * 2.0, fnf.decode(b), "{b:#04x} -> {c:#04x}");
        assert_eq!(c, if b == 0x80 { 0x00 } else { b });
    }

    // Bytes and fp32 scales together: q * s is unchanged for a whole quantized tensor.
    let mut rng = Rng::new(11);
    let mut q: Vec<u8> = (0..4096).map(|_| rng.byte()).filter(|&b| !fnf.is_nan(b)).collect();
    q.extend([0x80, 0x00, 0x7E, 0xFE]);
    let mut s: Vec<f32> = (0..q.len()).map(|_| 2f64.powf(rng.range(-20.0, 5.0)) as f32).collect();
    let before: Vec<f32> = q.iter().zip(&s).map(|(&b, &sc)| fnf.decode(b) * sc).collect();
    convert_e4m3fn_to_fnuz(&mut q, &mut s).unwrap();
    let after: Vec<f32> = q.iter().zip(&s).map(|(&b, &sc)| uz.decode(b) * sc).collect();
    assert_eq!(before, after);
    assert!(!q.contains(&0x80));

    // A scale that cannot be doubled is refused and nothing is modified.
    let (mut q2, mut s2) = (vec![0x80u8, 0x01], vec![1.0f32, f32::MAX]);
    assert!(matches!(convert_e4m3fn_to_fnuz(&mut q2, &mut s2), Err(blockfp8::Error::NonFinite { .. })));
    assert_eq!((q2, s2), (vec![0x80u8, 0x01], vec![1.0f32, f32::MAX]));
    let mut s3 = vec![f32::NAN];
    assert!(convert_e4m3fn_to_fnuz(&mut [0u8], &mut s3).is_err());
}

#[test]
fn fn_to_fnuz_conversion_with_ue8m0_scales() {
    let (fnf, uz) = (Fp8Format::E4m3fn, Fp8Format::E4m3fnuz);
    let ue8m0 = |e: u8| 2f64.powi(e as i32 - 127);
    let mut q: Vec<u8> = vec![0x80, 0x00, 0x01, 0x7E, 0xC3, 0x45];
    let mut e: Vec<u8> = vec![127, 0, 100, 130, 200, 253];
    let before: Vec<f64> = q.iter().zip(&e).map(|(&b, &x)| fnf.decode(b) as f64 * ue8m0(x)).collect();
    convert_e4m3fn_to_fnuz_ue8m0(&mut q, &mut e).unwrap();
    let after: Vec<f64> = q.iter().zip(&e).map(|(&b, &x)| uz.decode(b) as f64 * ue8m0(x)).collect();
    assert_eq!(before, after);
    assert_eq!(e, vec![128, 1, 101, 131, 201, 254]);
    for bad in [0xFEu8, 0xFF] {
        let (mut q, mut e) = (vec![0x80u8], vec![bad]);
        assert!(convert_e4m3fn_to_fnuz_ue8m0(&mut q, &mut e).is_err());
        assert_eq!((q[0], e[0]), (0x80, bad), "nothing modified on error");
    }
}

fn format_strategy() -> impl Strategy<Value = Fp8Format> {
    prop_oneof![Just(Fp8Format::E4m3fn), Just(Fp8Format::E4m3fnuz)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// decode(encode(x)) is the representable value nearest to x (ties aside), or +-max.
    #[test]
    fn encode_picks_the_nearest_value(f in format_strategy(), x in -600.0f32..600.0) {
        let got = f.decode(f.encode(x)) as f64;
        let xc = (x as f64).clamp(-(f.max_finite() as f64), f.max_finite() as f64);
        let err = (got - xc).abs();
        for b in (0..=255u8).filter(|&b| !f.is_nan(b)) {
            prop_assert!(err <= (f.decode(b) as f64 - xc).abs(), "{} x={} got {} but {} is nearer", f, x, got, f.decode(b));
        }
    }

    /// Rounding is monotone: x <= y implies decode(encode(x)) <= decode(encode(y)).
    #[test]
    fn encode_is_monotone(f in format_strategy(), x in proptest::num::f32::NORMAL | proptest::num::f32::SUBNORMAL | proptest::num::f32::ZERO,
                          y in proptest::num::f32::NORMAL | proptest::num::f32::SUBNORMAL | proptest::num::f32::ZERO) {
        let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
        prop_assert!(f.decode(f.encode(lo)) <= f.decode(f.encode(hi)), "{} {} {}", f, lo, hi);
    }

    /// Encoding is odd-symmetric (up to fnuz's missing -0) and scale-free by powers of two
    /// inside the normal range.
    #[test]
    fn encode_is_sign_symmetric_and_round_trips(f in format_strategy(), x in -1000.0f32..1000.0) {
        let (p, n) = (f.encode(x.abs()), f.encode(-x.abs()));
        prop_assert_eq!(n, negative_code(f, p));
        let b = f.encode(x);
        prop_assert_eq!(f.encode(f.decode(b)), b);
        prop_assert!((f.decode(b) - x).abs() <= x.abs().max(f.decode(0x08)) * 0.0625 + (x.abs() - f.max_finite()).max(0.0));
    }
}
