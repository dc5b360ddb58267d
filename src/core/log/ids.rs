//! Entry ids: unique across tabs without a random-number crate.

/// Produces ids such as `exec_mi9x2k1c_4f7q0z`: the time in base 36, then a mix of a per-store
/// seed and a counter, so two tabs appending in the same millisecond still differ.
#[derive(Debug, Clone)]
pub(crate) struct IdGenerator {
    seed: u64,
    counter: u64,
}

impl IdGenerator {
    /// A generator whose ids differ from those of any generator with another `seed`.
    pub fn new(seed: u64) -> Self {
        Self { seed, counter: 0 }
    }

    /// The next id, `{prefix}_{time}_{mix}`.
    pub fn next(&mut self, prefix: &str, now_ms: f64) -> String {
        self.counter += 1;
        let time = if now_ms.is_finite() && now_ms > 0.0 {
            now_ms as u64
        } else {
            0
        };
        let mix = splitmix64(self.seed ^ self.counter.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        format!("{prefix}_{}_{}", base36(time), base36(mix % 36u64.pow(8)))
    }
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
// The standard library's collections and sorts are the oracle here.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_within_and_across_seeds() {
        let mut a = IdGenerator::new(1);
        let mut b = IdGenerator::new(2);
        let ids: HashSet<String> = (0..500)
            .flat_map(|_| [a.next("exec", 1000.0), b.next("exec", 1000.0)])
            .collect();
        assert_eq!(ids.len(), 1000);
        assert!(a.next("tool", 36.0).starts_with("tool_10_"));
    }
}
