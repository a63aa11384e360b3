"""
Microaggregation release: information loss against k and ε
==========================================================

:class:`privtab.MicroaggregationMasker` (Soria-Comas et al.) releases a numeric
table record by record. Each column is ranked and cut into clusters of ``k``
consecutive values, and each record's value is replaced by its cluster's centroid
plus Laplace noise calibrated to how much that centroid can change:

* ``mechanism="dp"`` calibrates to the *global* sensitivity, the width hi − lo of
  the declared bounds over the cluster's size, and is ε-differentially private;
* ``"idp_ls"`` and ``"idp_cbls"`` calibrate to *local* sensitivities at the actual
  data and are ε-individually differentially private (iDP), a weaker guarantee:
  every person in the data gets the ε-DP protection, but only between this data set
  and its neighbours, not between any two neighbouring data sets.

This example plots the paper's mean SSE (lower is better) of the three mechanisms
against ``k`` and against ε, next to plain microaggregation without noise.
"""

# %%
# The numeric columns of Adult, with documented bounds
# ----------------------------------------------------
# The bounds come with the data set (see ``DESCR`` of
# :func:`privtab.datasets.load_adult`); they fix the global sensitivity, and every
# released value is clamped into them.
import matplotlib.pyplot as plt
import numpy as np

import privtab as pt

adult = pt.datasets.load_adult()
columns = ["age", "education-num", "hours-per-week", "capital-gain"]
X = adult.frame[columns].to_numpy(dtype=float)
bounds = [adult.bounds[c] for c in columns]
print(f"{len(X)} records; bounds: {dict(zip(columns, bounds, strict=True))}")

# %%
# One release and its ledger
# --------------------------
# ε is split equally over the columns; within a column, the clusters hold disjoint
# records, so every centroid may use the column's whole share (parallel
# composition). The ledger labels say which guarantee each part carries, and the
# accountant's report keeps ε-DP and ε-iDP apart. The seed is fixed for the page
# only.
accountant = pt.BudgetAccountant(1.0)
masker = pt.MicroaggregationMasker(
    10, 1.0, mechanism="idp_cbls", bounds=bounds, accountant=accountant, random_state=0
)
X_masked = masker.fit_transform(X)
print(accountant.report())
print("first record:", X[0], "->", X_masked[0].round(1))


# %%
# Information loss against k and ε
# --------------------------------
# Plain microaggregation (each value replaced by its cluster's centroid, no noise)
# is the non-private floor of every mechanism: it loses only what averaging over
# ``k`` records loses. Each point is a separate release on the same data (a study,
# not something to run on the data you protect), with the mean ± standard error
# over repetitions.
def centroids_only(X, k):
    """Every value replaced by the centroid of its cluster of k ranks (no noise)."""
    out = np.empty_like(X)
    for j in range(X.shape[1]):
        clusters = pt.microaggregate(X[:, j], k, mechanism="dp", bounds=bounds[j])
        out[:, j] = clusters.centroids[clusters.labels]
    return out


mechanisms = {
    "dp": "DP (ε-DP)",
    "idp_ls": "iDP-LS (ε-iDP)",
    "idp_cbls": "iDP-CBLS (ε-iDP)",
}
REPEATS = 3
seeds = iter(np.random.SeedSequence(2016).spawn(1000))


def mean_sse_runs(mechanism, k, epsilon):
    runs = []
    for _ in range(REPEATS):
        release = pt.MicroaggregationMasker(
            k,
            epsilon,
            mechanism=mechanism,
            bounds=bounds,
            accountant=pt.BudgetAccountant(epsilon),
            random_state=next(seeds),
        ).fit_transform(X)
        runs.append(pt.mean_sse(X, release))
    return runs


ks = [3, 10, 20, 50, 100, 200]
EPSILON = 1.0
by_k = {m: np.array([mean_sse_runs(m, k, EPSILON) for k in ks]) for m in mechanisms}
floor_by_k = [pt.mean_sse(X, centroids_only(X, k)) for k in ks]

epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
K = 20
by_epsilon = {
    m: np.array([mean_sse_runs(m, K, e) for e in epsilons]) for m in mechanisms
}
floor_at_K = pt.mean_sse(X, centroids_only(X, K))


def plot_with_band(ax, x, runs, label):
    mean = runs.mean(axis=1)
    error = runs.std(axis=1, ddof=1) / np.sqrt(runs.shape[1])
    ax.plot(x, mean, marker="o", label=label)
    ax.fill_between(x, mean - error, mean + error, alpha=0.3)


fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
for mechanism, name in mechanisms.items():
    plot_with_band(left, ks, by_k[mechanism], name)
    plot_with_band(right, epsilons, by_epsilon[mechanism], name)
left.plot(
    ks, floor_by_k, color="black", linestyle="--", label="microaggregation, no noise"
)
right.axhline(
    floor_at_K, color="black", linestyle="--", label="microaggregation, no noise"
)
left.set_xlabel("k (minimum cluster size)")
left.set_title(f"ε = {EPSILON:g}")
right.set_xlabel("ε (total for the table)")
right.set_title(f"k = {K}")
for ax in (left, right):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("mean SSE (lower is better)")
    ax.legend(fontsize=8)
fig.suptitle(f"Adult, {len(X)} records × {len(columns)} numeric columns")
plt.show()

# %%
# Reading the figure
# ------------------
# Under ε-DP the noise of a centroid is proportional to (hi − lo)/k, so the DP
# curve falls steeply with k, but it stays one to two orders of magnitude above the
# noise-free floor even at k = 200: Adult's capital gains reach a bound of 99,999
# while most values are 0. iDP-LS gains only a factor of about two, because its
# local sensitivity still reaches from a cluster to the farther bound of its
# column. iDP-CBLS's sensitivity depends only on the cluster's own values (after
# trimming its extremes), so it stays within a small factor of the floor at every k
# and meets it from k ≈ 20 at ε = 1, or from ε ≈ 3 at k = 20. Against ε, the loss
# falls roughly as 1/ε² once the noise is small against the bounds; at small ε,
# clamping into the bounds caps it.
#
# The gap between the DP and iDP curves is the price of the stronger guarantee.
# Choose iDP only when protection relative to the data actually held is what is
# required (see the limitations in the user guide), and report it as ε-iDP, never
# as ε-DP.
ratio = by_k["dp"].mean(axis=1) / by_k["idp_cbls"].mean(axis=1)
print(
    f"DP / iDP-CBLS mean SSE at ε = 1: {ratio.min():.0f}x to {ratio.max():.0f}x over k"
)
