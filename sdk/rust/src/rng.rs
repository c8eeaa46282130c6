//! `Rng`: SplitMix64 seeded by the host for setup and for every move
//! (docs/abi.md, "Rng"; test vectors in schemas/rng_vectors.json).

/// The game's only source of randomness. Every draw marks it as used, which
/// the host reports as `rng_used` (a move that drew can never be undone).
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
    used: bool,
}

/// Integer types `Rng::below` and `Rng::roll` accept, so that
/// `rng.below(cards.len())` gives a `usize` and `rng.below(6u64)` a `u64`.
pub trait Bound: Copy {
    /// The bound as u64. Panics when it is zero or negative.
    fn to_bound(self) -> u64;
    /// A drawn value (< the bound) back in this type.
    fn from_drawn(value: u64) -> Self;
}

macro_rules! impl_bound {
    ($($t:ty),*) => {$(
        impl Bound for $t {
            #[inline]
            fn to_bound(self) -> u64 {
                if self <= 0 {
                    panic!("Rng bound must be at least 1, got {}", self);
                }
                self as u64
            }
            #[inline]
            fn from_drawn(value: u64) -> Self {
                value as $t
            }
        }
    )*};
}

impl_bound!(u8, u16, u32, u64, usize, i32, i64);

impl Rng {
    /// A generator whose state starts at `seed` (any u64).
    #[inline]
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed, used: false }
    }

    /// The next raw 64-bit output of SplitMix64.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.used = true;
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n`, without modulo bias: raw outputs below
    /// `(2^64 - n) mod n` are rejected. Panics when `n < 1`.
    #[inline(always)]
    pub fn below<N: Bound>(&mut self, n: N) -> N {
        let bound = n.to_bound();
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let x = self.next_u64();
            if x >= threshold {
                return N::from_drawn(x % bound);
            }
        }
    }

    /// A die roll in `1..=sides`: `below(sides) + 1`. Panics when `sides < 1`.
    pub fn roll<N: Bound>(&mut self, sides: N) -> N {
        N::from_drawn(self.below(sides.to_bound()) + 1)
    }

    /// Shuffle `items` in place (Fisher–Yates from the end: for i from
    /// len-1 down to 1, swap i with `below(i + 1)`).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        let mut i = items.len();
        while i > 1 {
            i -= 1;
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// Whether any value has been drawn since this generator was made.
    pub fn used(&self) -> bool {
        self.used
    }
}
