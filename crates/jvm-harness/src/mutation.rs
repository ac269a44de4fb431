//! Deterministic mutations of byte inputs, for the tests that feed corrupted files to the record reader
//! and to the analysis (the stable-toolchain cousins of the cargo-fuzz targets in fuzz/). Deterministic,
//! so that a failure names a replayable (seed, round).

/// xorshift64 on a non-zero seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number in 0..n (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// One to four mutations of `data`: a bit flipped, a byte set to an edge value, four bytes rewritten as a
/// big-endian length or count (huge or small), the tail cut, bytes deleted, or a chunk of the input copied
/// elsewhere — what breaks a reader of length-prefixed records.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        if data.is_empty() {
            return;
        }
        let at = rng.below(data.len());
        match rng.below(6) {
            0 => data[at] ^= 1 << rng.below(8),
            1 => data[at] = [0, 0xFF, 0x7F, 0x80][rng.below(4)],
            2 => {
                // A length or count rewritten: four bytes big-endian, huge or small.
                let v: u32 = [0, 1, 0xFFFF_FFFF, 0x7FFF_FFFF, rng.next_u64() as u32][rng.below(5)];
                for (i, b) in v.to_be_bytes().iter().enumerate() {
                    if let Some(x) = data.get_mut(at + i) {
                        *x = *b;
                    }
                }
            }
            3 => data.truncate(at),
            4 => {
                let n = rng.below(16).min(data.len() - at);
                data.drain(at..at + n);
            }
            _ => {
                let from = rng.below(data.len());
                let n = rng.below(32).min(data.len() - from);
                let chunk: Vec<u8> = data[from..from + n].to_vec();
                data.splice(at..at, chunk);
            }
        }
    }
}
