//! `Boards`: two 64-bit boards side by side, the second turned half a
//! circle (bit 63 - i of it is square i), so that every line of the board
//! runs towards higher squares in one of the two: what runs down a line on
//! the board runs up the same line on the turned one. `compact` grows runs
//! by left shifts only, on both at once.
//!
//! In wasm the pair is one 128-bit SIMD value (the host accepts fixed-width
//! SIMD, docs/abi.md section 1) and each operation is one instruction; the
//! bit reversal is a byte shuffle and two 4-bit table lookups. Elsewhere
//! (native tests) it is two u64s with the same meaning, so the algorithm is
//! tested natively and the wasm instructions by the host's tests
//! (tests/test_inguest.py plays compact games against the table path).
//!
//! The wasm operations are `simd128` functions, inlined only into callers
//! that enable the feature too (`compact::placements`, `compact::flips`);
//! from any other caller each would be a call.

/// Two boards, `[first, second]`.
#[derive(Clone, Copy)]
pub struct Boards(imp::Lanes);

impl Boards {
    /// Each of two boards with itself turned: `[a, a.reverse_bits()]`
    /// and `[b, b.reverse_bits()]` (one bit reversal for both).
    #[inline(always)]
    pub fn turned(a: u64, b: u64) -> (Boards, Boards) {
        let (a, b) = imp::turned_pair(a, b);
        (Boards(a), Boards(b))
    }

    /// `[a, b]` as they are.
    #[inline(always)]
    pub fn new(a: u64, b: u64) -> Boards {
        Boards(imp::new(a, b))
    }

    /// `mask` in both.
    #[inline(always)]
    pub fn splat(mask: u64) -> Boards {
        Boards(imp::splat(mask))
    }

    /// `self & other`, board by board.
    #[inline(always)]
    pub fn and(self, other: Boards) -> Boards {
        Boards(imp::and(self.0, other.0))
    }

    /// `self | other`, board by board.
    #[inline(always)]
    pub fn or(self, other: Boards) -> Boards {
        Boards(imp::or(self.0, other.0))
    }

    /// `self & !other`.
    #[inline(always)]
    pub fn and_not(self, other: Boards) -> Boards {
        Boards(imp::and_not(self.0, other.0))
    }

    /// Each board shifted left by `bits` (< 64): one step up a line.
    #[inline(always)]
    pub fn up(self, bits: u32) -> Boards {
        Boards(imp::shl(self.0, bits))
    }

    /// The lowest set bit of each (0 for 0).
    #[inline(always)]
    pub fn lowest(self) -> Boards {
        Boards(imp::and(self.0, imp::neg(self.0)))
    }

    /// Every bit below the lowest set bit of each (all bits for 0).
    #[inline(always)]
    pub fn below_lowest(self) -> Boards {
        Boards(imp::and_not(imp::minus_one(self.0), self.0))
    }

    /// All ones in each non-zero board, 0 in a zero one.
    #[inline(always)]
    pub fn nonzero(self) -> Boards {
        Boards(imp::nonzero(self.0))
    }

    /// The second board turned back (`second.reverse_bits()`) ORed with
    /// the first: both boards' squares in the board's numbering.
    #[inline(always)]
    pub fn merged(self) -> u64 {
        imp::merged(self.0)
    }
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use core::arch::wasm32::*;

    pub type Lanes = v128;

    // `target_feature` functions cannot be `inline(always)`; `inline` is
    // enough for LLVM to inline these one-instruction bodies into callers
    // that have the feature (compact's routines).
    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn new(a: u64, b: u64) -> v128 {
        u64x2(a, b)
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn splat(a: u64) -> v128 {
        u64x2_splat(a)
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn and(a: v128, b: v128) -> v128 {
        v128_and(a, b)
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn or(a: v128, b: v128) -> v128 {
        v128_or(a, b)
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn and_not(a: v128, b: v128) -> v128 {
        v128_andnot(a, b)
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn shl(a: v128, bits: u32) -> v128 {
        i64x2_shl(a, bits)
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn neg(a: v128) -> v128 {
        i64x2_neg(a)
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn minus_one(a: v128) -> v128 {
        i64x2_sub(a, u64x2_splat(1))
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn nonzero(a: v128) -> v128 {
        i64x2_ne(a, u64x2_splat(0))
    }

    /// All 128 bits in reverse order: the bytes reversed, then the bits of
    /// each byte by looking up each 4-bit half.
    #[inline]
    #[target_feature(enable = "simd128")]
    fn reverse(a: v128) -> v128 {
        let bytes = i8x16_swizzle(a, u8x16(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
        // Reversed 4-bit values, for the low half (moved up) and the high half.
        let low_up = u8x16(0x00, 0x80, 0x40, 0xC0, 0x20, 0xA0, 0x60, 0xE0, 0x10, 0x90, 0x50, 0xD0, 0x30, 0xB0, 0x70, 0xF0);
        let high_down = u8x16(0x0, 0x8, 0x4, 0xC, 0x2, 0xA, 0x6, 0xE, 0x1, 0x9, 0x5, 0xD, 0x3, 0xB, 0x7, 0xF);
        let low = v128_and(bytes, u8x16_splat(0x0F));
        let high = u8x16_shr(bytes, 4);
        v128_or(i8x16_swizzle(low_up, low), i8x16_swizzle(high_down, high))
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn turned_pair(a: u64, b: u64) -> (v128, v128) {
        // reverse([a, b]) = [b reversed, a reversed].
        let both = u64x2(a, b);
        let reversed = reverse(both);
        (i64x2_shuffle::<0, 3>(both, reversed), i64x2_shuffle::<1, 2>(both, reversed))
    }

    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn merged(a: v128) -> u64 {
        // reverse([a0, a1]) = [a1 reversed, a0 reversed].
        u64x2_extract_lane::<0>(a) | u64x2_extract_lane::<0>(reverse(a))
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub type Lanes = [u64; 2];

    #[inline(always)]
    pub fn new(a: u64, b: u64) -> Lanes {
        [a, b]
    }

    #[inline(always)]
    pub fn splat(a: u64) -> Lanes {
        [a, a]
    }

    #[inline(always)]
    pub fn and(a: Lanes, b: Lanes) -> Lanes {
        [a[0] & b[0], a[1] & b[1]]
    }

    #[inline(always)]
    pub fn or(a: Lanes, b: Lanes) -> Lanes {
        [a[0] | b[0], a[1] | b[1]]
    }

    #[inline(always)]
    pub fn and_not(a: Lanes, b: Lanes) -> Lanes {
        [a[0] & !b[0], a[1] & !b[1]]
    }

    #[inline(always)]
    pub fn shl(a: Lanes, bits: u32) -> Lanes {
        [a[0] << bits, a[1] << bits]
    }

    #[inline(always)]
    pub fn neg(a: Lanes) -> Lanes {
        [a[0].wrapping_neg(), a[1].wrapping_neg()]
    }

    #[inline(always)]
    pub fn minus_one(a: Lanes) -> Lanes {
        [a[0].wrapping_sub(1), a[1].wrapping_sub(1)]
    }

    #[inline(always)]
    pub fn nonzero(a: Lanes) -> Lanes {
        [if a[0] != 0 { !0 } else { 0 }, if a[1] != 0 { !0 } else { 0 }]
    }

    #[inline(always)]
    pub fn turned_pair(a: u64, b: u64) -> (Lanes, Lanes) {
        ([a, a.reverse_bits()], [b, b.reverse_bits()])
    }

    #[inline(always)]
    pub fn merged(a: Lanes) -> u64 {
        a[0] | a[1].reverse_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tablehost_sdk::Rng;

    #[test]
    fn a_step_up_the_turned_board_is_a_step_down_the_board() {
        let mut rng = Rng::new(11);
        for _ in 0..1000 {
            let (a, b) = (rng.next_u64(), rng.next_u64());
            let (x, y) = Boards::turned(a, b);
            assert_eq!(x.merged(), a);
            assert_eq!(x.and(y).merged(), a & b);
            assert_eq!(x.and_not(y).merged(), a & !b);
            assert_eq!(x.up(8).merged(), a << 8 | a >> 8);
            assert_eq!(Boards::new(a, 0).lowest().merged(), a & a.wrapping_neg());
            let below = |x: u64| x.wrapping_sub(1) & !x;
            assert_eq!(Boards::new(a, b).below_lowest().merged(), below(a) | below(b).reverse_bits());
            assert_eq!(below(0), !0);
            assert_eq!(Boards::new(a, 0).nonzero().merged(), if a == 0 { 0 } else { !0 });
        }
    }
}
