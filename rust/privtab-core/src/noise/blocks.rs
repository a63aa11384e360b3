//! The block index of the exact discrete Laplace samplers: `J ≥ 0` with
//! `P(J ≥ j) = e^{-j/32}` (geometric of ratio `e^{-1/32}`), exactly, from one random word.
//!
//! A uniform `U` in `[0, 1)` gives `J = #{j ≥ 1 : U < e^{-j/32}}`. The leading 63 bits `u`
//! of `U` are compared with the table `⌊2^63·e^{-j/32}⌋`, `j = 1..=256` ([`BLOCK_EDGES`]
//! halved) through a guide table on its leading bits and one comparison. A comparison is decided by `u` unless `u` equals
//! the table entry (probability 2^-63 per variate); then further random words extend `U`
//! and are compared with the binary expansion of `e^{-j/32}`, computed on demand to as many
//! bits as the comparison needs ([`below_exp`]: a Taylor series in multi-word fixed point
//! with a proven error bound). No rounding of the table reaches the output: `J` has exactly
//! the geometric law. Past the last entry (`U < e^{-8}`) the draw restarts with 256 blocks
//! counted, which the memorylessness of the geometric law makes exact.

use crate::rng::Rng;
use rand::Rng as _;
use std::cmp::Ordering;

/// Blocks per unit of scale: a geometric variate of ratio `e^{-1/t}` is split into `t / BLOCKS`
/// times a block index `J` and an offset inside the block.
pub(crate) const BLOCKS: u64 = 32;

/// `⌊2^64 · e^{-j/32}⌋` for `j = 1..=256` (computed with 80-digit decimal arithmetic): the
/// block index `J` is at least `j` iff a uniform 64-bit word is below entry `j`.
pub(crate) const BLOCK_EDGES: [u64; 256] = [
    17879197424118840458,
    17329112349219823218,
    16795951612838286746,
    16279194507819420732,
    15778336347483353405,
    15292887972726955522,
    14822375274290527580,
    14366338729722795843,
    13924332954591997770,
    13495926267504750746,
    13080700268507883282,
    12678249430461478227,
    12288180702984045739,
    11910113128583022257,
    11543677470595692402,
    11188515852577165299,
    10844281408783216469,
    10510637945406642174,
    10187259612236275421,
    9873830584417992025,
    9570044754006901182,
    9275605431009477473,
    8990225053623659488,
    8713624907393923403,
    8445534853007046548,
    8185693062462714896,
    7933845763361307609,
    7689746991059119360,
    7453158348448964813,
    7223848773131556920,
    7001594311750268832,
    6786177901268885274,
    6577389156978730060,
    6375024167028128604,
    6178885293273534289,
    5988780978257821528,
    5804525558127232421,
    5625939081304263861,
    5452847132739403386,
    5285080663570070684,
    5122475826020402491,
    4964873813380637100,
    4812120704909815628,
    4664067315510325498,
    4520569050027472006,
    4381485762031780795,
    4246681616946112123,
    4116024959383911112,
    3989388184569030945,
    3866647613711552211,
    3747683373217885200,
    3632379277617186655,
    3520622716089752007,
    3412304542486561967,
    3307318968732571931,
    3205563461509637392,
    3106938642118171555,
    3011348189419735861,
    2918698745765773061,
    2828899825820608904,
    2741863728189675162,
    2657505449766646383,
    2575742602715838213,
    2496495334008788799,
    2419686247436439330,
    2345240328020747525,
    2273084868751911294,
    2203149399579651052,
    2135365618589200607,
    2069667325294790197,
    2005990355985473288,
    1944272521060153166,
    1884453544290608071,
    1826475003953196589,
    1770280275771750074,
    1715814477615927702,
    1663024415901024289,
    1611858533636882634,
    1562266860075172810,
    1514200961905861799,
    1467613895955209902,
    1422460163339096806,
    1378695665026901516,
    1336277658772537974,
    1295164717370583406,
    1255316688196730579,
    1216694653993049483,
    1179260894859759661,
    1142978851416392781,
    1107813089096367067,
    1073729263540102199,
    1040694087052876123,
    1008675296094665123,
    977641619770216356,
    947562749288578935,
    918409308362266468,
    890152824517141611,
    862765701285002682,
    836221191251714441,
    810493369934560711,
    785557110463306367,
    761388059040241149,
    737962611155238561,
    715257888532600469,
    693251716787172729,
    671922603767909866,
    651249718567738221,
    631212871179217713,
    611792492776133093,
    592969616601756849,
    574725859445118448,
    557043403687188861,
    539904979899445913,
    523293849977825499,
    507193790795586565,
    491589078359124560,
    476464472451259259,
    461805201746998950,
    447596949387244417,
    433825838996343383,
    420478421129839582,
    407541660139180759,
    395002921440557116,
    382849959175436416,
    371070904250744523,
    359654252747010890,
    348588854683157924,
    337863903126961437,
    327468923640547017,
    317393764050614323,
    307628584533398501,
    298163848004685266,
    288990310805494132,
    280099013674333046,
    271481272997207549,
    263128672326838843,
    255033054162808103,
    247186511984599146,
    239581382529758621,
    232210238309632223,
    225065880355367505,
    218141331187098717,
    211429827999447080,
    204924816056681191,
    198619942291086962,
    192509049098295019,
    186586168323505812,
    180845515432739113,
    175281483863415331,
    169888639548751153,
    164661715610621829,
    159595607215706913,
    154685366589895770,
    149926198186083688,
    145313454000639284,
    140842629033969055,
    136509356890745676,
    132309405515503040,
    128238673059433251,
    124293183874348897,
    120469084629898154,
    116762640550240616,
    113170231766508445,
    109688349781490483,
    106313594043086610,
    103042668623185822,
    99872378998724487,
    96799628931781033,
    93821417445660026,
    90934835894012364,
    88137065120129155,
    85425372703634949,
    82797110291891296,
    80249711013504398,
    77780686971410760,
    75387626813092487,
    73068193375549194,
    70820121402726524,
    68641215333171991,
    66529347155757513,
    64482454331374416,
    62498537778571169,
    60575659921166518,
    58711942795931267,
    56905566218490550,
    55154766005655376,
    53457832252447269,
    51813107662133293,
    50218985927640498,
    48673910162769007,
    47176371381671600,
    45724907025114798,
    44318099532082124,
    42954574955324508,
    41633001619505736,
    40352088820632416,
    39110585565498281,
    37907279349911714,
    36740994974513256,
    35610593397026586,
    34514970619822020,
    33453056611706083,
    32423814262884134,
    31426238372075408,
    30459354664791245,
    29522218841817738,
    28613915656973475,
    27733558023241705,
    26880286146403921,
    26053266685328735,
    25251691938095950,
    24474779053160959,
    23721769264789070,
    22991927152013037,
    22284539920390074,
    21598916705856883,
    20934387900002810,
    20290304496102163,
    19666037455267007,
    19060977092101372,
    18474532479256912,
    17906130870308449,
    17355217140385772,
    16821253244015389,
    16303717689642731,
    15802105030321612,
    15315925370073523,
    14844703885434658,
    14387980361723386,
    13945308743575276,
    13516256699306707,
    13100405198681594,
    12697348103668875,
    12306691771791057,
    11928054671676456,
    11561067010439638,
    11205370372526168,
    10860617369668934,
    10526471301614185,
    10202605827285929,
    9888704646067537,
    9584461188889290,
    9289578318820153,
    9003768040871376,
    8726751220728499,
    8458257312137067,
    8198024092675798,
    7945797407659160,
    7701330921919237,
    7464385879224467,
    7234730869100280,
    7012141600823916,
    6796400684372693,
    6587297418111784,
    6384627583014155,
    6188193243211692,
];

/// `⌊2^63 · e^{-j/32}⌋` for `j = 1..=256`: [`BLOCK_EDGES`] halved.
const HALF_EDGES: [u64; 256] = {
    let mut halved = [0u64; 256];
    let mut j = 0;
    while j < halved.len() {
        halved[j] = BLOCK_EDGES[j] >> 1;
        j += 1;
    }
    halved
};

/// Bits of a 63-bit word after its leading one that select its [`GUIDE`] bucket.
const GUIDE_BITS: u32 = 5;

/// Leading-zero counts of the 63-bit words above the last half edge (`2^63·e^{-8}` lies
/// between `2^51` and `2^52`).
const GUIDE_LEADING: u32 = 12;

/// For the 63-bit words with `z` leading zeros (`1 ≤ z ≤ 12`, counted in 64 bits) and the
/// `GUIDE_BITS` bits `m` after their leading one, entry `(z - 1)·32 + m` is the number of
/// half edges above the largest such word. A bucket spans a ratio `1 + 1/(32 + m)` of
/// values, less than one block (`e^{1/32}`), so it holds at most one edge: a word's count
/// of edges above it is the entry, plus one when the word is below the next edge (checked
/// by `guide_fits_one_edge_per_bucket`).
const GUIDE: [u8; (GUIDE_LEADING << GUIDE_BITS) as usize] = {
    let mut guide = [0u8; (GUIDE_LEADING << GUIDE_BITS) as usize];
    let mut bucket = 0;
    while bucket < guide.len() {
        let zeros = (bucket >> GUIDE_BITS) as u32 + 1;
        let m = (bucket & ((1 << GUIDE_BITS) - 1)) as u64;
        let largest = (((1 << GUIDE_BITS) + m + 1) << (63 - zeros - GUIDE_BITS)) - 1;
        let mut above = 0;
        while above < 255 && largest < HALF_EDGES[above] {
            above += 1;
        }
        guide[bucket] = above as u8;
        bucket += 1;
    }
    guide
};

/// The [`GUIDE`] bucket of a 63-bit word above the last half edge.
#[inline]
fn guide_bucket(top: u64) -> usize {
    let zeros = top.leading_zeros();
    (((zeros - 1) << GUIDE_BITS) as usize)
        | ((top >> (63 - zeros - GUIDE_BITS)) as usize & ((1 << GUIDE_BITS) - 1))
}

/// The number of half edges above a 63-bit word `top` above the last half edge.
#[inline]
fn half_edges_passed(top: u64) -> usize {
    let guess = usize::from(GUIDE[guide_bucket(top)]);
    guess + usize::from(top < HALF_EDGES[guess])
}

/// The number of the first 255 block edges that `word` is below (a branch-free binary
/// search over the decreasing edges).
#[inline]
pub(crate) fn blocks_passed(word: u64) -> usize {
    let mut passed = 0usize;
    let mut step = 128usize;
    while step > 0 {
        if word < BLOCK_EDGES[passed + step - 1] {
            passed += step;
        }
        step >>= 1;
    }
    passed
}

/// The block index `J`, `P(J ≥ j) = e^{-j/32}` exactly, for a uniform `U` whose leading 63
/// bits are `top` (`top < 2^63`); the rare undecided comparisons and the restarts past 256
/// blocks draw further words from `rng`.
#[inline]
pub(crate) fn block_index(rng: &mut Rng, top: u64) -> u64 {
    debug_assert!(top < 1 << 63);
    let last = HALF_EDGES[HALF_EDGES.len() - 1];
    let mut top = top;
    let mut counted = 0u64;
    loop {
        if top > last {
            let mut passed = half_edges_passed(top);
            if top == HALF_EDGES[passed]
                && below_exp(passed as u64 + 1, top, &mut || rng.next_u64())
            {
                passed += 1;
            }
            return counted + passed as u64;
        }
        if top == last && !below_exp(HALF_EDGES.len() as u64, top, &mut || rng.next_u64()) {
            return counted + HALF_EDGES.len() as u64 - 1;
        }
        counted += HALF_EDGES.len() as u64;
        top = rng.next_u64() >> 1;
    }
}

/// The block index [`block_index`] draws for a uniform whose leading 63 bits are `top`,
/// when `top` alone decides it (above the last half edge and on none of them), so that
/// [`block_index`] would draw no further word; `None` otherwise.
#[inline]
pub(crate) fn decided_block_index(top: u64) -> Option<u64> {
    if top <= HALF_EDGES[HALF_EDGES.len() - 1] {
        return None;
    }
    let passed = half_edges_passed(top);
    (top != HALF_EDGES[passed]).then_some(passed as u64)
}

/// For each [`GUIDE`] bucket with guess `g`: the half edge `E_g` (0-based) with `g` in its
/// lowest 8 bits, which no prefix of at most 55 bits looks at. `E_g` is the only edge that
/// a prefix inside the bucket can leave undecided (a bucket holds at most one edge, and
/// the bucket's other edges lie below it).
const PREFIX_GUIDE: [u64; GUIDE.len()] = {
    let mut table = [0u64; GUIDE.len()];
    let mut bucket = 0;
    while bucket < table.len() {
        let guess = GUIDE[bucket] as usize;
        table[bucket] = (HALF_EDGES[guess] & !0xff) | guess as u64;
        bucket += 1;
    }
    table
};

/// The block index `J` as [`block_index`] draws it, for a uniform `U` whose leading `bits`
/// bits are `prefix` (`17 ≤ bits ≤ 55`), so that one random word serves a block index and
/// other fields.
///
/// With `s = 63 - bits`, edge `j` (`e^{-j/32}`, as the half edge
/// `E = ⌊2^63·e^{-j/32}⌋`) is decided by the prefix unless `E >> s == prefix`:
/// `U < e^{-j/32}` when `(prefix + 1)·2^s ≤ E`, and not when `prefix·2^s > E`. The words
/// `prefix·2^s + [0, 2^s)` share one [`GUIDE`] bucket (its width is at least `2^46 ≥ 2^s`),
/// whose guess `g` counts the edges above it but its own edge `g`:
/// `J = g + [prefix < E_g >> s]` unless `E_g >> s == prefix`. Then, or past the table
/// (probability about `2^8 / 2^bits + e^-8` together), the next `s` bits of `U` are
/// drawn and [`block_index`] goes on from the 63-bit word, which extends ties and
/// restarts exactly as it always does.
#[inline(always)]
pub(crate) fn block_index_from_prefix(rng: &mut Rng, prefix: u64, bits: u32) -> u64 {
    debug_assert!((17..=55).contains(&bits) && prefix < 1 << bits);
    let shift = 63 - bits;
    let last = HALF_EDGES[HALF_EDGES.len() - 1] >> shift;
    if prefix >= last {
        let entry = PREFIX_GUIDE[guide_bucket(prefix << shift)];
        let edge = entry >> shift;
        if edge != prefix {
            return (entry & 0xff) + u64::from(prefix < edge);
        }
    }
    extend_prefix(rng, prefix, shift)
}

#[cold]
#[inline(never)]
fn extend_prefix(rng: &mut Rng, prefix: u64, shift: u32) -> u64 {
    let next = rng.next_u64() >> (64 - shift);
    block_index(rng, (prefix << shift) | next)
}

/// Whether `U < e^{-j/32}`, exactly, for the uniform `U = 0.b₁b₂…` whose first 63 bits are
/// `top` and whose following bits are the successive words of `next_word`, most significant
/// first (`1 ≤ j ≤ 256`).
///
/// With `m` words drawn, `U·2^(63+64m)` lies in `[u, u + 1)` for the integer `u` of the bits
/// drawn, and `2^(63+64m)·e^{-j/32}` lies within `(s - 1/2, s + 3/2)` for the integer `s` of
/// [`half_exp_fixed`]: the comparison is decided when `u + 2 ≤ s` (below) or `u ≥ s + 2`
/// (above), and otherwise one more word is drawn. `e^{-j/32}` is irrational, so this ends
/// with probability 1, after `1 + 2^-61` words on average.
#[cold]
#[inline(never)]
pub(crate) fn below_exp(j: u64, top: u64, next_word: &mut dyn FnMut() -> u64) -> bool {
    let mut drawn = vec![top];
    loop {
        drawn.insert(0, next_word());
        let bound = half_exp_fixed(j, drawn.len());
        if compare(&add_small(&drawn, 2), &bound) != Ordering::Greater {
            return true;
        }
        if compare(&drawn, &add_small(&bound, 2)) != Ordering::Less {
            return false;
        }
    }
}

/// An integer `s` (little-endian 64-bit limbs) with `|2^(64·limbs)·e^{-j/32}/2 - s - 1/2| < 1`
/// for `1 ≤ j ≤ 256`.
///
/// The Taylor series `Σ (-x)^n/n!`, `x = j/32 ≤ 8`, is summed in fixed point with
/// `F = 64·(limbs + 1)` fractional bits: each term is the previous one times `j`, divided by
/// `32·n` and rounded down, so the computed term `n` falls short of the exact one by at most
/// `δ_n ≤ δ_{n-1}·x/n + 1 ≤ n·e^x < 2^12·n` units of `2^-F`. The sum stops at the first
/// `N > x` whose computed term is zero; the exact remainder of the alternating, decreasing
/// tail is at most the exact term `N`, i.e. `δ_N`. The sum is therefore within
/// `2^12·(N² + N) < 2^63` units of the exact value (`N < F + 26`, far below `2^25`), and
/// dropping its lowest limb leaves `s` with the stated bound.
pub(crate) fn half_exp_fixed(j: u64, limbs: usize) -> Vec<u64> {
    let width = limbs + 2;
    let mut term = vec![0u64; width];
    term[limbs] = 1 << 63;
    let mut even = term.clone();
    let mut odd = vec![0u64; width];
    for n in 1u64.. {
        mul_small(&mut term, j);
        div_small(&mut term, 32 * n);
        add_assign(if n % 2 == 0 { &mut even } else { &mut odd }, &term);
        if 32 * n > j && term.iter().all(|&limb| limb == 0) {
            break;
        }
    }
    sub_assign(&mut even, &odd);
    even.remove(0);
    even
}

fn mul_small(value: &mut [u64], factor: u64) {
    let mut carry = 0u128;
    for limb in value.iter_mut() {
        let product = u128::from(*limb) * u128::from(factor) + carry;
        *limb = product as u64;
        carry = product >> 64;
    }
}

fn div_small(value: &mut [u64], divisor: u64) {
    let mut remainder = 0u128;
    for limb in value.iter_mut().rev() {
        let current = (remainder << 64) | u128::from(*limb);
        *limb = (current / u128::from(divisor)) as u64;
        remainder = current % u128::from(divisor);
    }
}

fn add_assign(sum: &mut [u64], addend: &[u64]) {
    let mut carry = false;
    for (limb, &other) in sum.iter_mut().zip(addend) {
        let (partial, first) = limb.overflowing_add(other);
        let (total, second) = partial.overflowing_add(u64::from(carry));
        *limb = total;
        carry = first || second;
    }
}

fn sub_assign(difference: &mut [u64], subtrahend: &[u64]) {
    let mut borrow = false;
    for (limb, &other) in difference.iter_mut().zip(subtrahend) {
        let (partial, first) = limb.overflowing_sub(other);
        let (total, second) = partial.overflowing_sub(u64::from(borrow));
        *limb = total;
        borrow = first || second;
    }
}

fn add_small(value: &[u64], small: u64) -> Vec<u64> {
    let mut sum = value.to_vec();
    sum.push(0);
    let mut addend = vec![0u64; sum.len()];
    addend[0] = small;
    add_assign(&mut sum, &addend);
    sum
}

/// Compares two little-endian integers of any lengths.
fn compare(a: &[u64], b: &[u64]) -> Ordering {
    let limb = |value: &[u64], i: usize| value.get(i).copied().unwrap_or(0);
    (0..a.len().max(b.len()))
        .rev()
        .map(|i| limb(a, i).cmp(&limb(b, i)))
        .find(|order| order.is_ne())
        .unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(j, ⌊2^63·e^{-j/32}⌋, the next 64 bits, the 64 after)`, from 150-digit decimal
    /// arithmetic (Python's `decimal`).
    const EXPANSIONS: [(u64, u64, u64, u64); 4] = [
        (
            1,
            0x7c0fd5aa22d75e45,
            0x2c02afe5dd89cd74,
            0x7034356801175185,
        ),
        (
            5,
            0x6d7bf4a7c930989e,
            0xafebeb852f6ababe,
            0xdf9c9be68f3e06b3,
        ),
        (
            100,
            0x059fb9b67fe11ee3,
            0xf20c1577f0621399,
            0x9a3e759fc224518b,
        ),
        (
            256,
            0x000afe10820813d6,
            0x5dfe6a33c07f738f,
            0x5691fde5bfa540f2,
        ),
    ];

    fn distance(a: &[u64], b: &[u64]) -> u64 {
        let (high, low) = if compare(a, b) == Ordering::Less {
            (b, a)
        } else {
            (a, b)
        };
        let mut difference = high.to_vec();
        difference.resize(high.len().max(low.len()), 0);
        sub_assign(&mut difference, low);
        assert!(difference[1..].iter().all(|&limb| limb == 0));
        difference[0]
    }

    #[test]
    fn series_agrees_with_the_table_and_a_decimal_reference() {
        for (j, &edge) in HALF_EDGES.iter().enumerate() {
            let bound = half_exp_fixed(j as u64 + 1, 1);
            assert!(distance(&bound, &[edge]) <= 1, "{j}");
        }
        for (j, top, next, after) in EXPANSIONS {
            let bound = half_exp_fixed(j, 3);
            assert!(distance(&bound, &[after, next, top]) <= 1, "{j}");
        }
    }

    fn script(words: &[u64], then: u64) -> impl FnMut() -> u64 + '_ {
        let mut at = 0;
        move || {
            at += 1;
            words.get(at - 1).copied().unwrap_or(then)
        }
    }

    #[test]
    fn undecided_comparisons_follow_the_exact_expansion() {
        for (j, top, next, after) in EXPANSIONS {
            assert!(below_exp(j, top, &mut script(&[next - 1], 0)));
            assert!(!below_exp(j, top, &mut script(&[next + 1], u64::MAX)));
            assert!(below_exp(j, top, &mut script(&[next, after - 1], 0)));
            assert!(!below_exp(
                j,
                top,
                &mut script(&[next, after + 1], u64::MAX)
            ));
            assert!(!below_exp(j, top, &mut script(&[next, after], u64::MAX)));
            assert!(below_exp(j, top, &mut script(&[next, after], 0)));
        }
    }

    #[test]
    fn guide_fits_one_edge_per_bucket() {
        let last = HALF_EDGES[255];
        let count = |top: u64| HALF_EDGES[..255].iter().filter(|&&e| top < e).count();
        for (bucket, &guess) in GUIDE.iter().enumerate() {
            let zeros = (bucket >> GUIDE_BITS) as u32 + 1;
            let m = (bucket & 31) as u64;
            let lowest = ((32 + m) << (63 - zeros - GUIDE_BITS)).max(last + 1);
            let largest = ((32 + m + 1) << (63 - zeros - GUIDE_BITS)) - 1;
            if largest <= last {
                continue;
            }
            assert_eq!(guide_bucket(lowest), bucket);
            assert_eq!(guide_bucket(largest), bucket);
            assert_eq!(count(largest), usize::from(guess));
            assert!(count(lowest) <= usize::from(guess) + 1, "{bucket}");
        }
        let mut rng = crate::rng::Seed::from_u64(2).stream(0);
        for &edge in &HALF_EDGES[..255] {
            for top in [edge - 1, edge, edge + 1, rng.next_u64() >> 1] {
                if top > last {
                    assert_eq!(half_edges_passed(top), count(top), "{top}");
                }
            }
        }
    }

    #[test]
    fn prefix_block_index_counts_the_edges_the_prefix_decides() {
        check_prefix_block_index::<17>();
        check_prefix_block_index::<31>();
        check_prefix_block_index::<55>();
    }

    fn check_prefix_block_index<const BITS: u32>() {
        let mut rng = crate::rng::Seed::from_u64(4).stream(0);
        let shift = 63 - BITS;
        let last = HALF_EDGES[255] >> shift;
        let decided = |prefix: u64| HALF_EDGES.iter().filter(|&&e| e >> shift > prefix).count();
        let mut prefixes: Vec<u64> = HALF_EDGES
            .iter()
            .flat_map(|&edge| [(edge >> shift) - 1, edge >> shift, (edge >> shift) + 1])
            .collect();
        prefixes.extend((0..10_000).map(|_| rng.next_u64() >> (64 - BITS)));
        prefixes.extend([0, last - 1, (1 << BITS) - 1]);
        for prefix in prefixes {
            let tied = HALF_EDGES.iter().any(|&e| e >> shift == prefix);
            for _ in 0..4 {
                let block = block_index_from_prefix(&mut rng, prefix, BITS) as usize;
                if prefix < last {
                    assert!(block >= 256, "{prefix}");
                } else if tied {
                    // A tie with the last edge may restart past the table.
                    let below = decided(prefix);
                    assert!(block == below || block == below + 1 || below == 255 && block > 256);
                } else {
                    assert_eq!(block, decided(prefix), "{BITS} {prefix}");
                }
            }
        }
    }

    #[test]
    fn block_index_counts_the_edges_above_the_word() {
        let mut rng = crate::rng::Seed::from_u64(3).stream(0);
        for (j, &edge) in HALF_EDGES[..255].iter().enumerate() {
            assert_eq!(block_index(&mut rng, edge + 1), j as u64);
            assert_eq!(block_index(&mut rng, edge - 1), j as u64 + 1);
            let tied = block_index(&mut rng, edge);
            assert!(tied == j as u64 || tied == j as u64 + 1);
        }
        assert_eq!(block_index(&mut rng, (1 << 63) - 1), 0);
        assert!(block_index(&mut rng, 0) >= 256);
    }
}
