//! Decimal text to `f64`, rounded to the nearest double (ties to even) as `str::parse` and
//! `JSON.parse` round it, without the standard library's parser and its table of powers of
//! five (about 12 KB of the web build, gzip); and back: the shortest decimal that reads as a
//! double, as `JSON.stringify` writes it ([`shortest_decimal`]).
//!
//! Short numbers (at most 15 significant digits and a power of ten up to 22, which is every
//! iteration number, token count and setting a record holds) take one exact multiplication or
//! division. Longer ones start from an estimate and move it one double at a time until the
//! exact value lies between the halfway points to its neighbours, compared in whole numbers.

use std::cmp::Ordering;

/// The significant digits kept: every halfway point between two doubles has at most 767, so
/// the digits past these only matter as "some were not zero" (one more digit 1 says so).
const KEPT_DIGITS: usize = 800;

/// The value of the decimal `text`: an optional sign, digits with an optional point (at least
/// one digit) and an optional exponent (`e` or `E`, an optional sign, digits). Anything else,
/// `inf` and `NaN` included, is `None`; a value beyond the doubles is an infinity.
pub fn parse_decimal(text: &str) -> Option<f64> {
    let (negative, unsigned) = split_sign(text.as_bytes());
    let magnitude = Decimal::read(unsigned)?.value();
    Some(if negative { -magnitude } else { magnitude })
}

/// The shortest decimal that reads back as `value` (finite and above zero), the one nearest to
/// it where several are as short (the even one at a tie), as `Number.prototype.toString` and
/// `JSON.stringify` choose: its digits, without trailing zeros, and `n`, where the point goes:
/// `value` reads from 0.d1d2… × 10^n. Found from the exact decimal expansion of `value`: the
/// two decimals of each length 1, 2, … that bracket it, nearer first, each read back exactly.
pub fn shortest_decimal(value: f64) -> (u64, i32) {
    let (mantissa, power) = unpack(value.to_bits());
    let mut exact = Big::from_u64(mantissa);
    // value = exact × 10^shift
    let shift = if power >= 0 {
        exact.mul_pow2(power as u32);
        0
    } else {
        exact.mul_pow5(power.unsigned_abs() as u32);
        power
    };
    let digits = exact.decimal_digits();
    let n = digits.len() as i64 + shift;
    let reads_back = |candidate: u64, point: i64, length: usize| {
        let text = format!("{candidate}e{}", point - length as i64);
        parse_decimal(&text).is_some_and(|back| back.to_bits() == value.to_bits())
    };
    let mut nearest = (0, n);
    for length in 1..=digits.len().min(17) {
        let head = digits[..length]
            .iter()
            .fold(0u64, |head, digit| head * 10 + u64::from(digit - b'0'));
        let rest = &digits[length..];
        let half = match rest.first() {
            None => Ordering::Less,
            Some(&first) => {
                first
                    .cmp(&b'5')
                    .then_with(|| match rest[1..].iter().any(|&d| d != b'0') {
                        true => Ordering::Greater,
                        false => Ordering::Equal,
                    })
            }
        };
        let up_first = half == Ordering::Greater || (half == Ordering::Equal && head % 2 == 1);
        let exact_here = rest.iter().all(|&d| d == b'0');
        let order = match (exact_here, up_first) {
            (true, _) => [head, head],
            (false, true) => [head + 1, head],
            (false, false) => [head, head + 1],
        };
        // A carry into a new digit (999… + 1) is one digit shorter, its point one further.
        let place = |candidate: u64| match candidate == 10u64.pow(length as u32) {
            true => (candidate / 10, n + 1),
            false => (candidate, n),
        };
        for (candidate, point) in order.map(place) {
            if reads_back(candidate, point, length) {
                return without_trailing_zeros(candidate, point);
            }
        }
        nearest = place(order[0]);
    }
    // Seventeen digits always read back; this is the nearest of them.
    without_trailing_zeros(nearest.0, nearest.1)
}

/// `digits` without its trailing zeros, and `point` as it was (it counts from the first digit).
fn without_trailing_zeros(mut digits: u64, point: i64) -> (u64, i32) {
    while digits != 0 && digits % 10 == 0 {
        digits /= 10;
    }
    (digits, point.clamp(-400, 400) as i32)
}

/// Whether `bytes` start with `-`, and the bytes after a leading `-` or `+`.
fn split_sign(bytes: &[u8]) -> (bool, &[u8]) {
    match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, bytes),
    }
}

/// A non-negative decimal: `digits` (ASCII, no leading or trailing zero) × 10^`exponent`.
struct Decimal {
    digits: Vec<u8>,
    exponent: i64,
}

/// Powers of ten that are exact doubles.
const EXACT_POWERS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

impl Decimal {
    /// The decimal `bytes` (no sign), or `None` when they are not one.
    fn read(bytes: &[u8]) -> Option<Decimal> {
        let mut at = 0;
        let mut digits = Vec::new();
        let mut exponent: i64 = 0;
        let mut seen_digit = false;
        let mut dropped_nonzero = false;
        let mut in_fraction = false;
        while at < bytes.len() {
            match bytes[at] {
                b'.' if !in_fraction => in_fraction = true,
                digit @ b'0'..=b'9' => {
                    seen_digit = true;
                    if digits.is_empty() && digit == b'0' {
                        if in_fraction {
                            exponent -= 1;
                        }
                    } else if digits.len() < KEPT_DIGITS {
                        digits.push(digit);
                        if in_fraction {
                            exponent -= 1;
                        }
                    } else {
                        dropped_nonzero |= digit != b'0';
                        if !in_fraction {
                            exponent += 1;
                        }
                    }
                }
                _ => break,
            }
            at += 1;
        }
        if !seen_digit {
            return None;
        }
        if at < bytes.len() {
            exponent = exponent.saturating_add(written_exponent(&bytes[at..])?);
        }
        if dropped_nonzero {
            digits.push(b'1');
            exponent -= 1;
        }
        while digits.last() == Some(&b'0') {
            digits.pop();
            exponent += 1;
        }
        Some(Decimal { digits, exponent })
    }

    /// The nearest double.
    fn value(&self) -> f64 {
        let count = self.digits.len() as i64;
        if count == 0 {
            return 0.0;
        }
        // 10^(count-1+exponent) <= value < 10^(count+exponent)
        if count + self.exponent > 310 {
            return f64::INFINITY;
        }
        if count + self.exponent < -324 {
            return 0.0;
        }
        if count <= 15 && self.exponent.abs() <= 22 {
            let whole = self.leading(15) as f64;
            let power = EXACT_POWERS[self.exponent.unsigned_abs() as usize];
            return if self.exponent < 0 {
                whole / power
            } else {
                whole * power
            };
        }
        self.nearest_from(self.estimate())
    }

    /// The first `count` digits as a whole number (`count` at most 19).
    fn leading(&self, count: usize) -> u64 {
        self.digits
            .iter()
            .take(count)
            .fold(0, |whole, digit| whole * 10 + u64::from(digit - b'0'))
    }

    /// A double near the value, from its first 19 digits (the largest finite double stands
    /// in for an estimate beyond it).
    fn estimate(&self) -> f64 {
        let used = self.digits.len().min(19);
        // |power| stays below 1200: the checks in `value` bound count + exponent.
        let power = (self.exponent + (self.digits.len() - used) as i64) as i32;
        let leading = self.leading(used) as f64;
        let estimate = if power < -290 {
            leading * 10f64.powi(power + 290) * 1e-290
        } else if power > 290 {
            leading * 10f64.powi(power - 290) * 1e290
        } else {
            leading * 10f64.powi(power)
        };
        if estimate.is_finite() {
            estimate
        } else {
            f64::MAX
        }
    }

    /// The nearest double, found by moving from `start` one double at a time.
    fn nearest_from(&self, start: f64) -> f64 {
        let scaled = self.scaled_digits();
        let mut bits = start.to_bits();
        let odd = |bits: u64| bits & 1 == 1;
        loop {
            let above = self.compare(&scaled, upper_halfway(bits));
            if above == Ordering::Greater || (above == Ordering::Equal && odd(bits)) {
                if bits == f64::MAX.to_bits() {
                    return f64::INFINITY;
                }
                bits += 1;
                continue;
            }
            if bits == 0 {
                return 0.0;
            }
            let below = self.compare(&scaled, lower_halfway(bits));
            if below == Ordering::Less || (below == Ordering::Equal && odd(bits)) {
                bits -= 1;
                continue;
            }
            return f64::from_bits(bits);
        }
    }

    /// The digits as a whole number, times 10^exponent when the exponent is positive (a
    /// negative one scales the other side of every comparison instead).
    fn scaled_digits(&self) -> Big {
        let mut scaled = Big::from_digits(&self.digits);
        if self.exponent > 0 {
            scaled.mul_pow10(self.exponent as u32);
        }
        scaled
    }

    /// How the value, whose digits are `scaled` (see [`Decimal::scaled_digits`]), compares with
    /// `mantissa` × 2^`power`.
    fn compare(&self, scaled: &Big, (mantissa, power): (u64, i64)) -> Ordering {
        let mut decimal = scaled.clone();
        let mut binary = Big::from_u64(mantissa);
        if self.exponent < 0 {
            binary.mul_pow10(self.exponent.unsigned_abs() as u32);
        }
        if power >= 0 {
            binary.mul_pow2(power as u32);
        } else {
            decimal.mul_pow2(power.unsigned_abs() as u32);
        }
        decimal.cmp(&binary)
    }
}

/// The exponent part (`e-7`) at the start of `bytes`, which must be all of them; a power
/// beyond any double's saturates.
fn written_exponent(bytes: &[u8]) -> Option<i64> {
    let (first, rest) = bytes.split_first()?;
    if !matches!(first, b'e' | b'E') {
        return None;
    }
    let (negative, digits) = split_sign(rest);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let magnitude = digits.iter().fold(0i64, |power, digit| {
        (power * 10 + i64::from(digit - b'0')).min(1_000_000)
    });
    Some(if negative { -magnitude } else { magnitude })
}

/// The double with these bits as mantissa × 2^power, the mantissa holding the implicit bit.
fn unpack(bits: u64) -> (u64, i64) {
    let biased = (bits >> 52) as i64;
    let fraction = bits & ((1 << 52) - 1);
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    }
}

/// The point halfway between the double with these bits and the next one up.
fn upper_halfway(bits: u64) -> (u64, i64) {
    let (mantissa, power) = unpack(bits);
    (2 * mantissa + 1, power - 1)
}

/// The point halfway between the (positive) double with these bits and the next one down,
/// whose unit in the last place is half as large when this one is the first of its binade.
fn lower_halfway(bits: u64) -> (u64, i64) {
    let (mantissa, power) = unpack(bits);
    if mantissa == 1 << 52 && bits >> 52 > 1 {
        (4 * mantissa - 1, power - 2)
    } else {
        (2 * mantissa - 1, power - 1)
    }
}

/// A non-negative whole number in base 2^32, least significant limb first, no zero limb last.
#[derive(Clone, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(value: u64) -> Big {
        let mut big = Big(vec![value as u32, (value >> 32) as u32]);
        big.trim();
        big
    }

    fn from_digits(digits: &[u8]) -> Big {
        let mut big = Big(Vec::with_capacity(digits.len() / 9 + 1));
        for chunk in digits.chunks(9) {
            let value = chunk
                .iter()
                .fold(0u32, |value, digit| value * 10 + u32::from(digit - b'0'));
            big.mul_add(10u32.pow(chunk.len() as u32), value);
        }
        big
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// self = self × factor + carry.
    fn mul_add(&mut self, factor: u32, carry: u32) {
        let mut carry = u64::from(carry);
        for limb in &mut self.0 {
            let product = u64::from(*limb) * u64::from(factor) + carry;
            *limb = product as u32;
            carry = product >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut power: u32) {
        while power >= 9 {
            self.mul_add(1_000_000_000, 0);
            power -= 9;
        }
        self.mul_add(10u32.pow(power), 0);
    }

    fn mul_pow5(&mut self, mut power: u32) {
        while power >= 13 {
            self.mul_add(1_220_703_125, 0);
            power -= 13;
        }
        self.mul_add(5u32.pow(power), 0);
    }

    /// self = self / divisor; the remainder.
    fn div_rem_small(&mut self, divisor: u32) -> u32 {
        let mut remainder = 0u64;
        for limb in self.0.iter_mut().rev() {
            let current = (remainder << 32) | u64::from(*limb);
            *limb = (current / u64::from(divisor)) as u32;
            remainder = current % u64::from(divisor);
        }
        self.trim();
        remainder as u32
    }

    /// The decimal digits, most significant first, as ASCII (`"0"` for zero).
    fn decimal_digits(mut self) -> Vec<u8> {
        let mut digits = Vec::new();
        while !self.0.is_empty() {
            let mut chunk = self.div_rem_small(1_000_000_000);
            for _ in 0..9 {
                digits.push(b'0' + (chunk % 10) as u8);
                chunk /= 10;
            }
        }
        while digits.len() > 1 && digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits.is_empty() {
            digits.push(b'0');
        }
        digits.reverse();
        digits
    }

    fn mul_pow2(&mut self, power: u32) {
        if self.0.is_empty() {
            return;
        }
        let (limbs, bits) = ((power / 32) as usize, power % 32);
        if bits > 0 {
            self.mul_add(1 << bits, 0);
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, other: &Big) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Big {
    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

#[cfg(test)]
mod tests;
