//! A small deterministic generator (xorshift), so that a generated case replays from its seed
//! and the property tests need no crate.

/// The generator's state.
pub struct Seeded(pub u64);

impl Seeded {
    /// A number below `below` (0 when `below` is 0).
    pub fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below.max(1)
    }

    /// One of `from`.
    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next(from.len() as u64) as usize]
    }
}
