//! SplitMix64: a small, fast generator whose whole state is one u64, so that a record's random
//! fields are a pure function of (seed, task, iteration) and a restarted task needs no saved state.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The generator of record `iteration` of task `task` for `seed`: the three are mixed, so that
    /// neighbouring iterations and tasks give unrelated streams.
    pub fn for_record(seed: u64, task: u64, iteration: u64) -> Rng {
        let mut r = Rng(seed ^ task.wrapping_mul(0xD1B5_4A32_D192_ED03));
        r.0 ^= mix(iteration.wrapping_add(r.next()));
        r
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A uniform integer in [lo, hi) (lo when the range is empty).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = hi.wrapping_sub(lo) as u64;
        if span == 0 || hi < lo {
            return lo;
        }
        lo.wrapping_add((self.next() % span) as i64)
    }

    /// A uniform float in [lo, hi).
    pub fn float(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
