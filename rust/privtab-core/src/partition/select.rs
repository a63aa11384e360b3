//! Selections on the discernibility search: NonPrivateKD (greedy), PrivateKD (exponential
//! mechanism per round) and MDA(σ) (the shortest greedy prefix discerning enough pairs).

use super::search::{DiscernibilitySearch, Layout};
use super::{Labels, Partition};
use crate::columns::Columns;
use crate::noise::exponential_mechanism;
use crate::rng::Seed;
use crate::{Error, Result};

#[derive(Clone, Copy, Debug)]
pub enum Rule<'s> {
    /// The largest gain F(S ∪ {a}) − F(S), ties to the lowest index (NonPrivateKD).
    Greedy,
    /// P(a) ∝ exp(`epsilon` · (F(S ∪ {a}) − F(S))) by Gumbel-max, round `r` drawing from
    /// `seed.derive(r)` (PrivateKD with ε' = `epsilon`).
    Exponential {
        /// ε' of one round.
        epsilon: f64,
        /// The key of the whole selection.
        seed: &'s Seed,
    },
}

/// The attributes chosen by a selection, in order, with n·F of every prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Column indices in the order chosen.
    pub order: Vec<usize>,
    /// n·F(S_i) after step i: ordered pairs discerned by the first i + 1 attributes.
    pub discerned_pairs: Vec<u128>,
}

impl Selection {
    /// F(S_i) of every prefix, for a table of `n_rows` rows.
    pub fn discernibility_path(&self, n_rows: usize) -> Vec<f64> {
        let n = n_rows.max(1) as f64;
        self.discerned_pairs
            .iter()
            .map(|&pairs| pairs as f64 / n)
            .collect()
    }
}

/// k rounds of discernibility selection over the columns of `cols` (paper 001,
/// Algorithm 1): each round scores every remaining candidate in one parallel pass
/// ([`DiscernibilitySearch::gains`]) and picks one by `rule`. O(k·d·n) overall.
///
/// # Privacy
/// With [`Rule::Exponential`] and `epsilon` = ε', one round is 4ε'-differentially private
/// under replace-one neighbours (F has sensitivity 2, and the mechanism uses exp(ε'·u)
/// rather than exp(ε'·u/(2Δ))), and the k rounds 4kε' (Theorem 1 of the paper).
///
/// # Errors
/// [`Error::InvalidParameter`] when `k` exceeds the number of columns or `epsilon` is not
/// finite and > 0; errors of [`DiscernibilitySearch::new`].
pub fn select_discerning(
    cols: Columns<'_>,
    labels: &Labels<'_>,
    k: usize,
    rule: Rule<'_>,
) -> Result<Selection> {
    select_discerning_in(cols, labels, k, rule, Layout::Auto)
}

/// [`select_discerning`] with the search in the given [`Layout`] (the result does not
/// depend on it).
///
/// # Privacy
/// As [`select_discerning`].
///
/// # Errors
/// As [`select_discerning`].
pub fn select_discerning_in(
    cols: Columns<'_>,
    labels: &Labels<'_>,
    k: usize,
    rule: Rule<'_>,
    layout: Layout,
) -> Result<Selection> {
    if k > cols.n_cols() {
        return Err(Error::InvalidParameter {
            name: "n_features",
            value: format!("{k} ({} columns)", cols.n_cols()),
            rule: "must be <= the number of columns",
        });
    }
    if let Rule::Exponential { epsilon, .. } = rule {
        crate::error::check_positive_finite("epsilon", epsilon)?;
    }
    let mut search = DiscernibilitySearch::with_layout(cols, labels, layout)?;
    let mut out = Selection {
        order: Vec::with_capacity(k),
        discerned_pairs: Vec::with_capacity(k),
    };
    for round in 0..k {
        let gains = search.gains()?;
        let pick = match rule {
            Rule::Greedy => argmax_first(&gains),
            Rule::Exponential { epsilon, seed } => {
                exponential_round(&gains, epsilon, search.n_rows(), seed, round as u64)?
            }
        };
        let attribute = search.remaining()[pick];
        out.order.push(attribute);
        if round + 1 == k {
            // The last pick needs no refined layout: its gain gives n·F(S).
            out.discerned_pairs
                .push(search.discerned_pairs() + gains[pick]);
            break;
        }
        search.add_with_gain(attribute, gains[pick])?;
        out.discerned_pairs.push(search.discerned_pairs());
    }
    Ok(out)
}

/// The choice of PrivateKD's round `round` among candidates with the gains n·(F(S ∪ {a}) −
/// F(S)) in `gains`: P(a) ∝ exp(`epsilon` · gain / `n_rows`) by Gumbel-max, drawn from
/// `seed.derive(round)`. This is the draw [`select_discerning`] makes, so gains computed
/// elsewhere (e.g. merged from counts of blocks of rows) select the same attribute for
/// the same seed.
///
/// # Privacy
/// One round of [`Rule::Exponential`]: 4·`epsilon`-differentially private when the gains
/// are those of the data (F has sensitivity 2).
///
/// # Errors
/// [`Error::InvalidParameter`] when `epsilon` is not finite and > 0 or `gains` is empty.
pub fn exponential_round(
    gains: &[u128],
    epsilon: f64,
    n_rows: usize,
    seed: &Seed,
    round: u64,
) -> Result<usize> {
    crate::error::check_positive_finite("epsilon", epsilon)?;
    let weights = log_weights(gains, epsilon, n_rows);
    Ok(exponential_mechanism(&weights, 1, false, &seed.derive(round))?[0])
}

/// MDA(σ): the shortest prefix S of the greedy order with F(S) ≥ (1 − σ)·F(A), compared
/// as n·F(S) ≥ (1 − σ)·n·F(A) in floating point; empty when F(A) = 0.
///
/// # Errors
/// [`Error::InvalidParameter`] when `sigma` is not in [0, 1); errors of
/// [`DiscernibilitySearch::new`].
pub fn minimum_discerning(cols: Columns<'_>, labels: &Labels<'_>, sigma: f64) -> Result<Selection> {
    minimum_discerning_in(cols, labels, sigma, Layout::Auto)
}

/// [`minimum_discerning`] with the search in the given [`Layout`] (the result does not
/// depend on it).
///
/// # Errors
/// As [`minimum_discerning`].
pub fn minimum_discerning_in(
    cols: Columns<'_>,
    labels: &Labels<'_>,
    sigma: f64,
    layout: Layout,
) -> Result<Selection> {
    if !(0.0..1.0).contains(&sigma) {
        return Err(Error::parameter("sigma", sigma, "must be in [0, 1)"));
    }
    let mut search = DiscernibilitySearch::with_layout(cols, labels, layout)?;
    let all: Vec<usize> = (0..cols.n_cols()).collect();
    let full = Partition::from_columns(cols, &all)?.score(labels)?;
    let target = (1.0 - sigma) * (search.differing_pairs() - full.undiscerned_pairs) as f64;
    let mut out = Selection {
        order: Vec::new(),
        discerned_pairs: Vec::new(),
    };
    if target == 0.0 {
        return Ok(out);
    }
    while (search.discerned_pairs() as f64) < target && !search.remaining().is_empty() {
        let gains = search.gains()?;
        let pick = argmax_first(&gains);
        let attribute = search.remaining()[pick];
        search.add_with_gain(attribute, gains[pick])?;
        out.order.push(attribute);
        out.discerned_pairs.push(search.discerned_pairs());
    }
    Ok(out)
}

/// ε'·(gain − max gain)/n: the log-weights of exp(ε'·ΔF) shifted by their maximum, so that
/// no product overflows (an underflow to −inf only drops a weight below e^−700).
pub(super) fn log_weights(gains: &[u128], epsilon: f64, n_rows: usize) -> Vec<f64> {
    let top = gains.iter().copied().max().unwrap_or(0);
    let n = n_rows.max(1) as f64;
    gains
        .iter()
        .map(|&g| -(epsilon * ((top - g) as f64 / n)))
        .collect()
}

pub(super) fn argmax_first(values: &[u128]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}
