//! `parse_decimal` against the standard library's parser, bit for bit; `shortest_decimal` against
//! its shortest printer (`{:e}`), digit for digit.

use super::{parse_decimal, shortest_decimal, Decimal};

/// The standard library's reading of `text`, as bits.
fn std_bits(text: &str) -> Option<u64> {
    text.parse::<f64>().ok().map(f64::to_bits)
}

#[track_caller]
fn agrees(text: &str) {
    assert_eq!(
        parse_decimal(text).map(f64::to_bits),
        std_bits(text),
        "{text:?}: ours {:?}, std {:?}",
        parse_decimal(text),
        text.parse::<f64>()
    );
}

/// A small deterministic generator (xorshift64*).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    /// A finite positive double with random bits.
    fn double(&mut self) -> f64 {
        loop {
            let value = f64::from_bits(self.next() >> 1);
            if value.is_finite() {
                return value;
            }
        }
    }
}

#[test]
fn every_double_written_any_way_reads_back_as_itself() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let value = random.double();
        for text in [
            format!("{value}"),
            format!("{value:e}"),
            format!("{value:.17e}"),
            format!("{value:.40e}"),
            format!("-{value:E}"),
        ] {
            agrees(&text);
        }
    }
}

#[test]
fn random_decimals_round_as_the_standard_parser_rounds_them() {
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    for _ in 0..20_000 {
        let length = 1 + random.below(40) as usize;
        let mut digits: String = (0..length)
            .map(|_| char::from(b'0' + random.below(10) as u8))
            .collect();
        if random.below(2) == 0 {
            digits.insert(random.below(length as u64 + 1) as usize, '.');
        }
        if digits == "." {
            digits = "0".into();
        }
        let exponent = random.below(700) as i64 - 360;
        agrees(&digits);
        agrees(&format!("{digits}e{exponent}"));
    }
}

/// Decimal digits of a whole number held in base 10^9, most significant first.
fn decimal(limbs: &[u64]) -> String {
    let mut text = String::new();
    for (at, limb) in limbs.iter().rev().enumerate() {
        if at == 0 {
            text.push_str(&limb.to_string());
        } else {
            text.push_str(&format!("{limb:09}"));
        }
    }
    text
}

/// `limbs` (base 10^9, least significant first) × `factor`.
fn times(limbs: &mut Vec<u64>, factor: u64) {
    let mut carry = 0;
    for limb in limbs.iter_mut() {
        let product = *limb * factor + carry;
        *limb = product % 1_000_000_000;
        carry = product / 1_000_000_000;
    }
    while carry > 0 {
        limbs.push(carry % 1_000_000_000);
        carry /= 1_000_000_000;
    }
}

/// The exact decimal text of the point halfway between `value` and the next double up.
fn halfway_above(value: f64) -> String {
    let bits = value.to_bits();
    let (biased, fraction) = ((bits >> 52) as i64, bits & ((1 << 52) - 1));
    let (mantissa, power) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    let twice = 2 * mantissa + 1;
    let mut limbs = vec![twice % 1_000_000_000, twice / 1_000_000_000];
    // (2m + 1) × 2^(power - 1) = (2m + 1) × 5^k / 10^k with k = 1 - power, or × 2^(power - 1).
    let shift = power - 1;
    if shift >= 0 {
        for _ in 0..shift {
            times(&mut limbs, 2);
        }
    } else {
        for _ in 0..-shift {
            times(&mut limbs, 5);
        }
    }
    while limbs.last() == Some(&0) && limbs.len() > 1 {
        limbs.pop();
    }
    format!("{}e{}", decimal(&limbs), shift.min(0))
}

/// The point halfway above `value`, and a point a hair above and a hair below it.
fn around_halfway(value: f64) -> Vec<String> {
    let halfway = halfway_above(value);
    let Some((digits, exponent)) = halfway.split_once('e') else {
        panic!("{halfway} has an exponent");
    };
    let exponent: i64 = exponent.parse().unwrap_or_default();
    let mut texts = vec![
        format!("{digits}000000000001e{}", exponent - 12),
        halfway.clone(),
    ];
    // A halfway point with a fraction ends in 5; 4999... in its place is a hair less.
    if let Some(stem) = digits.strip_suffix('5') {
        texts.push(format!("{stem}4999999999999999e{}", exponent - 15));
    }
    texts
}

#[test]
fn exact_halfway_points_and_their_neighbourhood_round_as_the_standard_parser_does() {
    let mut random = Random(0x1234_5678_9abc_def1);
    let mut values: Vec<f64> = (0..400).map(|_| random.double()).collect();
    values.extend([0.0, 1.0, 0.5, 9007199254740992.0, f64::MIN_POSITIVE, 5e-324]);
    values.extend([f64::MAX, 1e23, 1e22, 123456789012345680.0]);
    for value in values {
        for text in around_halfway(value) {
            agrees(&text);
        }
    }
}

#[test]
fn the_limits_of_the_doubles_round_as_the_standard_parser_does() {
    for text in [
        "0",
        "-0",
        "-0.0",
        "0e999999999999999999999",
        "1e99999999999999999999",
        "1e-99999999999999999999",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "179769313486231580793728971405301e276",
        "5e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "4.9406564584124654e-324",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "2.2250738585072014e-308",
        "1e400",
        "1e-400",
        "1e308",
        "1e-308",
        "1e23",
        "9007199254740993",
        "9007199254740993.000000000000000000001",
        "123456789012345678901234567890",
        "0.1",
        "7.",
        ".7",
        "+7",
        "00012.5000",
        "1E5",
        "1e+5",
        "1e-5",
    ] {
        agrees(text);
    }
}

#[test]
fn texts_longer_than_the_kept_digits_round_as_the_standard_parser_does() {
    let zeros = "0".repeat(1200);
    let nines = "9".repeat(1200);
    for text in [
        format!("1{zeros}e-1200"),
        format!("1{zeros}1e-1201"),
        format!("0.{zeros}1e1200"),
        format!("{nines}e-1200"),
        format!("0.{nines}"),
        format!("{nines}.{nines}e-1500"),
        format!("2.{zeros}1"),
        format!("1{zeros}"),
    ] {
        agrees(&text);
    }
    // The halfway point above 1, with a nonzero digit far past the kept ones.
    agrees(&format!(
        "1.00000000000000011102230246251565404236316680908203125{zeros}1"
    ));
    agrees(&format!(
        "1.00000000000000011102230246251565404236316680908203125{zeros}"
    ));
}

#[test]
fn texts_that_are_not_decimals_are_refused() {
    for text in [
        "", "-", "+", ".", "-.", "e5", ".e5", "1e", "1e+", "1e-", "1.2.3", " 1", "1 ", "0x10",
        "1_0", "--1", "+-1", "1e5.5", "1ee5", "١",
    ] {
        assert_eq!(std_bits(text), None, "{text:?}");
        assert_eq!(parse_decimal(text), None, "{text:?}");
    }
    for text in ["inf", "-inf", "infinity", "NaN", "nan"] {
        assert!(text.parse::<f64>().is_ok());
        assert_eq!(parse_decimal(text), None, "{text:?}");
    }
}

#[test]
fn the_walk_finds_the_nearest_double_from_any_start_across_binades() {
    let mut starts_from = Vec::new();
    for power in [
        -1074, -1073, -1023, -1022, -1021, -500, -1, 0, 1, 52, 53, 500, 1023,
    ] {
        let value = if power < -1022 {
            f64::from_bits(1 << (power + 1074))
        } else {
            f64::from_bits(((power + 1023) as u64) << 52)
        };
        let below = f64::from_bits(value.to_bits() - 1);
        starts_from.push(below);
        starts_from.push(value);
    }
    let mut random = Random(0x0bad_cafe_f00d_d00d);
    starts_from.extend((0..50).map(|_| random.double()));
    for value in starts_from {
        for text in around_halfway(value) {
            let wanted = std_bits(&text).unwrap_or_default();
            let Some(decimal) = Decimal::read(text.as_bytes()) else {
                panic!("{text:?} is a decimal");
            };
            for distance in [0, 1, 2, 40] {
                for start in [wanted.saturating_sub(distance), wanted + distance] {
                    let start = f64::from_bits(start).min(f64::MAX);
                    let found = decimal.nearest_from(start).to_bits();
                    assert_eq!(found, wanted, "{text:?} from {start:e}");
                }
            }
        }
    }
}

/// The standard library's shortest digits of `value` (positive) and where the point goes.
fn std_shortest(value: f64) -> (u64, i32) {
    let written = format!("{value:e}");
    let (mantissa, exponent) = written.split_once('e').unwrap_or((&written, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (
        digits.parse().unwrap_or(0),
        exponent.parse::<i32>().unwrap_or(0) + 1,
    )
}

#[test]
fn the_shortest_decimal_is_the_one_the_standard_library_prints() {
    let mut random = Random(0x5eed_cafe);
    let mut values: Vec<f64> = vec![
        77_928_578_787.012_34,
        0.1,
        0.1 + 0.2,
        1.0 / 3.0,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        1e21,
        1e-7,
        9_007_199_254_740_993.0,
        2f64.powi(-1022),
        2f64.powi(60),
    ];
    for _ in 0..15_000 {
        values.push(random.double());
        // Shares and sums the package computes: a few digits divided, or added up.
        let a = random.below(100_000) as f64 + 1.0;
        let b = random.below(100_000) as f64 + 1.0;
        values.push(a / b);
        values.push(a / 1000.0 + b / 100.0);
        // Decimals with up to 17 digits, as apps write them.
        let digits = random.below(1 << 56);
        let exponent = random.below(40) as i32 - 20;
        values.push(parse_decimal(&format!("{digits}e{exponent}")).unwrap_or(1.0));
    }
    // Powers of two, where the gap below is half the gap above.
    values.extend(
        (-1074..1024)
            .map(|e| 2f64.powi(e))
            .filter(|v| *v > 0.0 && v.is_finite()),
    );
    let mut ties = 0;
    for value in values {
        let (ours, theirs) = (shortest_decimal(value), std_shortest(value));
        if ours == theirs {
            continue;
        }
        // Two decimals of the same length, as near as each other: the standard library takes
        // the upper, JavaScript the even one (V8: 698901099704227.25 → "698901099704227.2").
        let (length, their_length) = (ours.0.to_string().len(), theirs.0.to_string().len());
        assert_eq!((length, ours.1), (their_length, theirs.1), "{value:e}");
        assert_eq!(ours.0 + 1, theirs.0, "{value:e}");
        assert_eq!(ours.0 % 2, 0, "{value:e}: the even one");
        let text = |digits: u64| format!("{digits}e{}", ours.1 - length as i32);
        assert_eq!(parse_decimal(&text(ours.0)), Some(value));
        assert_eq!(parse_decimal(&text(theirs.0)), Some(value));
        ties += 1;
        assert!(ties < 200, "{value:e}: not a tie");
    }
}
