//! Word-level kernels on bitsets (`&[u64]`), shared by the miner, the containment-anonymity
//! oracle and the clustering.
//!
//! The portable x86-64 target has no `popcnt` or `pext` instruction, so `count_ones` would
//! compile to a bit-twiddling sequence; each kernel is also compiled for the CPU features
//! that make it fast and picks that version at run time. Results are the same either way.

/// Whether the CPU has `popcnt`.
#[cfg(target_arch = "x86_64")]
fn has_popcnt() -> bool {
    std::arch::is_x86_feature_detected!("popcnt")
}

/// Whether the CPU has a fast `pext`: BMI2, except on AMD before Zen 3 (family 0x19),
/// where the instruction is microcoded and slower than the portable loop.
#[cfg(target_arch = "x86_64")]
fn has_fast_pext() -> bool {
    use std::sync::OnceLock;
    static FAST: OnceLock<bool> = OnceLock::new();
    *FAST.get_or_init(|| {
        if !std::arch::is_x86_feature_detected!("bmi2") {
            return false;
        }
        let leaf0 = std::arch::x86_64::__cpuid(0);
        let vendor = [leaf0.ebx, leaf0.edx, leaf0.ecx];
        let signature = std::arch::x86_64::__cpuid(1).eax;
        let amd = vendor == [0x6874_7541, 0x6974_6e65, 0x444d_4163];
        let family = ((signature >> 8) & 0xf) + ((signature >> 20) & 0xff);
        !amd || family >= 0x19
    })
}

multiversion! {
    /// Number of set bits of `a`.
    fn count(a: &[u64]) -> u64, "popcnt", has_popcnt, {
        a.iter().map(|x| u64::from(x.count_ones())).sum()
    }
}

multiversion! {
    /// Number of set bits of `a ∧ b` (over the shorter length).
    fn count_and(a: &[u64], b: &[u64]) -> u64, "popcnt", has_popcnt, {
        a.iter().zip(b).map(|(x, y)| u64::from((x & y).count_ones())).sum()
    }
}

multiversion! {
    /// Whether `a ∧ b` has at least `k` set bits; stops reading as soon as it has.
    fn count_and_reaches(a: &[u64], b: &[u64], k: u64) -> bool, "popcnt", has_popcnt, {
        let mut total = 0;
        for (x, y) in a.chunks(8).zip(b.chunks(8)) {
            total += x.iter().zip(y).map(|(x, y)| u64::from((x & y).count_ones())).sum::<u64>();
            if total >= k {
                return true;
            }
        }
        total >= k
    }
}

multiversion! {
    /// Number of set bits of `a ∧ b ∧ c` (over the shortest length).
    fn count_and3(a: &[u64], b: &[u64], c: &[u64]) -> u64, "popcnt", has_popcnt, {
        a.iter()
            .zip(b)
            .zip(c)
            .map(|((x, y), z)| u64::from((x & y & z).count_ones()))
            .sum()
    }
}

multiversion! {
    /// Number of set bits of `a ⊕ b` (the Hamming distance, over the shorter length).
    fn count_xor(a: &[u64], b: &[u64]) -> u64, "popcnt", has_popcnt, {
        a.iter().zip(b).map(|(x, y)| u64::from((x ^ y).count_ones())).sum()
    }
}

/// Positions of the set bits of `bits`, increasing.
pub fn ones(bits: &[u64]) -> impl Iterator<Item = usize> + '_ {
    bits.iter().enumerate().flat_map(|(word, &x)| {
        std::iter::successors((x != 0).then_some(x), |&z| {
            let rest = z & (z - 1);
            (rest != 0).then_some(rest)
        })
        .map(move |z| word * 64 + z.trailing_zeros() as usize)
    })
}

/// For each word of `mask`, the number of set bits before it, and the total.
pub fn ranks(mask: &[u64]) -> (Vec<usize>, usize) {
    let mut total = 0;
    let rank = mask
        .iter()
        .map(|x| {
            let before = total;
            total += count(std::slice::from_ref(x)) as usize;
            before
        })
        .collect();
    (rank, total)
}

/// Whether [`squeeze`] runs its `pext` version: `pext` is fast and the CPU has every
/// feature that version is compiled for (BMI2 and `popcnt`).
#[cfg(target_arch = "x86_64")]
fn squeeze_by_pext(fast_pext: bool, popcnt: bool) -> bool {
    fast_pext && popcnt
}

/// Bits of `source` at the positions set in `mask`, packed: the `r`-th set bit of `mask`
/// becomes bit `r` of `target`, which must hold `count(mask)` bits and start cleared.
/// `rank[w]` is the number of set bits of `mask` before word `w`.
pub fn squeeze(mask: &[u64], rank: &[usize], source: &[u64], target: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if squeeze_by_pext(has_fast_pext(), has_popcnt()) {
        // SAFETY: the CPU has BMI2 and popcnt (checked by `has_fast_pext`, `has_popcnt`).
        unsafe { squeeze_pext(mask, rank, source, target) };
        return;
    }
    squeeze_portable(mask, rank, source, target);
}

/// [`squeeze`] by the `pext` instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,popcnt")]
fn squeeze_pext(mask: &[u64], rank: &[usize], source: &[u64], target: &mut [u64]) {
    for ((&m, &r), &s) in mask.iter().zip(rank).zip(source) {
        let packed = std::arch::x86_64::_pext_u64(s, m);
        if packed == 0 {
            continue;
        }
        let (word, shift) = (r / 64, r % 64);
        target[word] |= packed << shift;
        if shift != 0 && shift + m.count_ones() as usize > 64 {
            target[word + 1] |= packed >> (64 - shift);
        }
    }
}

/// [`squeeze`] on any CPU, one set bit at a time.
fn squeeze_portable(mask: &[u64], rank: &[usize], source: &[u64], target: &mut [u64]) {
    for ((&m, &r), &s) in mask.iter().zip(rank).zip(source) {
        let mut bits = m & s;
        while bits != 0 {
            let bit = bits.trailing_zeros();
            let at = r + (m & ((1u64 << bit) - 1)).count_ones() as usize;
            target[at / 64] |= 1 << (at % 64);
            bits &= bits - 1;
        }
    }
}

/// Positive weights of the bits of a bitset, as bit planes: plane `b` has bit `t` set when
/// bit `b` of weight `t` is, so the weight of a bitset `x` is `Σ_b popcount(x ∧ plane_b) << b`.
/// Unit weights have no planes: the weight is a popcount.
#[derive(Debug, Clone)]
pub struct WeightPlanes {
    words: usize,
    planes: Vec<u64>,
}

/// Number of planes for weights up to `max_weight`.
pub fn n_planes(max_weight: u64) -> usize {
    if max_weight <= 1 {
        0
    } else {
        (64 - max_weight.leading_zeros()) as usize
    }
}

impl WeightPlanes {
    /// The planes of `weights` (each ≥ 1), on bitsets of `words` words.
    pub fn new(weights: &[u64], words: usize) -> Self {
        let n = n_planes(weights.iter().copied().max().unwrap_or(1));
        let mut planes = vec![0u64; n * words];
        for (t, &weight) in weights.iter().enumerate() {
            for b in 0..n {
                if weight >> b & 1 != 0 {
                    planes[b * words + t / 64] |= 1 << (t % 64);
                }
            }
        }
        WeightPlanes { words, planes }
    }

    /// Number of planes (0 for unit weights).
    pub fn len(&self) -> usize {
        self.planes.len() / self.words.max(1)
    }

    /// Whether every weight is 1.
    pub fn is_empty(&self) -> bool {
        self.planes.is_empty()
    }

    /// Total weight of the bits of `x`.
    pub fn weight(&self, x: &[u64]) -> u64 {
        if self.planes.is_empty() {
            return count(x);
        }
        self.planes
            .chunks_exact(self.words)
            .enumerate()
            .map(|(b, plane)| count_and(x, plane) << b)
            .sum()
    }

    /// Total weight of the bits of `x ∧ y`.
    pub fn and_weight(&self, x: &[u64], y: &[u64]) -> u64 {
        if self.planes.is_empty() {
            return count_and(x, y);
        }
        self.planes
            .chunks_exact(self.words)
            .enumerate()
            .map(|(b, plane)| count_and3(x, y, plane) << b)
            .sum()
    }

    /// Weight of bit `t`.
    pub fn at(&self, t: usize) -> u64 {
        if self.planes.is_empty() {
            return 1;
        }
        self.planes
            .chunks_exact(self.words)
            .enumerate()
            .map(|(b, plane)| (plane[t / 64] >> (t % 64) & 1) << b)
            .sum()
    }

    /// The weights of the `n` bits set in `mask`, packed as [`squeeze`] packs them; planes
    /// left empty are dropped, and none is kept when every weight left is 1.
    pub fn squeeze(&self, mask: &[u64], rank: &[usize], n: usize) -> Self {
        let words = n.div_ceil(64).max(1);
        let mut planes = vec![0u64; self.len() * words];
        for (source, target) in self
            .planes
            .chunks_exact(self.words)
            .zip(planes.chunks_exact_mut(words))
        {
            squeeze(mask, rank, source, target);
        }
        while planes.len() >= words && planes[planes.len() - words..].iter().all(|&x| x == 0) {
            planes.truncate(planes.len() - words);
        }
        let unit = planes.len() == words
            && planes.iter().enumerate().all(|(w, &x)| {
                let bits = (n - 64 * w).min(64);
                x == if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                }
            });
        if unit {
            planes.clear();
        }
        WeightPlanes { words, planes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(seed: u64, n: usize) -> Vec<u64> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state & state.rotate_left(seed as u32 % 64)
            })
            .collect()
    }

    #[test]
    fn ones_lists_the_set_bits() {
        for seed in 1..30u64 {
            let a = words(seed, 1 + seed as usize % 5);
            let expected: Vec<usize> = (0..a.len() * 64).filter(|&i| bit(&a, i)).collect();
            assert_eq!(ones(&a).collect::<Vec<_>>(), expected);
        }
    }

    fn bit(a: &[u64], i: usize) -> bool {
        a[i / 64] >> (i % 64) & 1 != 0
    }

    #[test]
    fn counts_equal_bit_by_bit_counts() {
        for seed in 1..40u64 {
            let n = 1 + seed as usize % 9;
            let (a, b, c) = (words(seed, n), words(seed + 100, n), words(seed + 200, n));
            let by_bit = |f: &dyn Fn(usize) -> bool| (0..n * 64).filter(|&i| f(i)).count() as u64;
            assert_eq!(count(&a), by_bit(&|i| bit(&a, i)));
            assert_eq!(count_and(&a, &b), by_bit(&|i| bit(&a, i) && bit(&b, i)));
            assert_eq!(
                count_and3(&a, &b, &c),
                by_bit(&|i| bit(&a, i) && bit(&b, i) && bit(&c, i))
            );
            assert_eq!(count_xor(&a, &b), by_bit(&|i| bit(&a, i) != bit(&b, i)));
            let both = count_and(&a, &b);
            for k in [
                0,
                1,
                both.saturating_sub(1),
                both,
                both + 1,
                64 * n as u64 + 1,
            ] {
                assert_eq!(count_and_reaches(&a, &b, k), both >= k, "k = {k}");
            }
        }
    }

    type Squeeze = fn(&[u64], &[usize], &[u64], &mut [u64]);

    /// Every version of `squeeze` this CPU can run, by name.
    fn squeeze_versions() -> Vec<(&'static str, Squeeze)> {
        let mut versions: Vec<(&'static str, Squeeze)> =
            vec![("dispatch", squeeze), ("portable", squeeze_portable)];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("bmi2") && has_popcnt() {
            versions.push(("pext", |mask, rank, source, target| {
                // SAFETY: the CPU has BMI2 and popcnt (checked above).
                unsafe { squeeze_pext(mask, rank, source, target) }
            }));
        }
        versions
    }

    #[test]
    fn squeeze_packs_the_masked_bits_in_order() {
        for (name, version) in squeeze_versions() {
            for seed in 1..60u64 {
                let n = 1 + seed as usize % 7;
                let (mask, source) = (words(seed, n), words(seed + 7, n));
                let (rank, total) = ranks(&mask);
                assert_eq!(total, count(&mask) as usize);
                let mut target = vec![0u64; total.div_ceil(64).max(1)];
                version(&mask, &rank, &source, &mut target);
                let expected: Vec<bool> = (0..n * 64)
                    .filter(|&i| bit(&mask, i))
                    .map(|i| bit(&source, i))
                    .collect();
                let got: Vec<bool> = (0..total).map(|r| bit(&target, r)).collect();
                assert_eq!(got, expected, "{name}, seed {seed}");
                assert!((total..target.len() * 64).all(|r| !bit(&target, r)));
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn squeeze_by_pext_only_with_popcnt() {
        assert!(squeeze_by_pext(true, true));
        assert!(!squeeze_by_pext(true, false));
        assert!(!squeeze_by_pext(false, true));
    }
}
