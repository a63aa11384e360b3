"""Reproduce Figs. 3, 4 and 5 of Battaglia, Celano & Pensa (2021), DILCA / DP-DILCA.

- Fig. 3: mean Pearson correlation between the DP and the non-private distance matrix of
  each target attribute, against epsilon, over the non-binary attributes (the paper
  drops binary ones: their 2x2 matrices always correlate perfectly). Epsilon here is the
  budget of ONE target attribute (section 4.2), so the whole metric is fitted with
  ``DPDILCA(epsilon * m)`` (epsilon / m per attribute, API.md). Each DP variant is
  compared with its own non-private counterpart: DP-MeanSU with DILCA_M
  (``DILCA("mean_su")``), DP-MaxRelevance / DP-MaxDependency with non-private
  MaxRelevance / MaxDependency, obtained as ``DPDILCA(1e9, method=...)`` (at that budget
  the exponential mechanism is an argmax and the table noise has scale ~1e-8 counts).
  A constant DP matrix (undefined correlation) counts as 0.
- Fig. 4: ARI of Ward clustering (scipy ``linkage(method="ward")``, cut at the number
  of classes) against the class, with the metric learnt on the predictors with total
  budget epsilon.
- Fig. 5: 5-NN accuracy, 4-fold stratified CV; the metric is learnt on the three
  training folds with the declared cardinalities of the full data.

Both run on the Euclidean embedding ``model.transform`` (the concatenated classical-MDS
coordinates of each attribute's values), whose Euclidean distances are the object
distances ``pairwise_distances`` up to rounding: the same clustering and neighbours,
without materialising the n x n object distances per fit.

Variants: DP-MeanSU, DP-MaxRelevance, DP-MaxDependency (k = 3, h = 0.3) and the
non-private DILCA_M. The paper's epsilon grid (appendix A.4.3) is
0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 2.5, with 30 repetitions.

Data (``_dilca_loaders``): Mushroom, Adult (train + test), Dermatology, Soybean (large,
train + test) and CMC (Fig. 3 only; the paper drops CMC from Figs. 4-5 because its
classes do not match any clustering). NLTCS and the IPUMS extracts of the paper are not
used (NLTCS is all binary, so Fig. 3 is trivially 1 there; IPUMS is not available).
Numeric columns: 5 equal-width bins on data-derived bounds (the paper used k-means
binning: ``--binning kmeans``).

Object-level evaluation on a data set with more than ``--max-objects`` rows (Adult,
Mushroom at the default 4000) uses a stratified subsample of that many rows (fixed
seed) for the Ward clustering, and at most that many training and test rows per fold
for the k-NN; the metric is always learnt on all the (training) rows. The paper does not
say how it clustered 48842 objects (a full distance matrix would take 19 GB).

Seeds: every fit gets ``random_state`` derived from ``--seed`` (default 0) with
``np.random.SeedSequence([seed, dataset, variant, epsilon index, repetition, fold])``.

Run from the repository root (needs matplotlib)::

    python benches/paper000_figs.py            # paper grid, 30 repetitions, all data
    python benches/paper000_figs.py --quick    # 3 repetitions, Mushroom + Soybean

Writes ``benches/results/paper000_fig{3,4,5}.{md,png,json}`` (or into ``--out``), each
figure as soon as it is done, so the figures can also be run separately (``--figs``).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.metrics import accuracy_score, adjusted_rand_score
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))

import privtab as pt

import _dilca_loaders as loaders
from _timing import Stopwatch

RESULTS = Path(__file__).resolve().parent / "results"
PAPER_EPSILONS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5]
QUICK_EPSILONS = [0.1, 0.5, 2.5]
DP_VARIANTS = {
    "DP-MeanSU": "mean_su",
    "DP-MaxRelevance": "max_relevance",
    "DP-MaxDependency": "max_dependency",
}
#: Budget at which DPDILCA is the non-private method (see the module docstring).
NON_PRIVATE_EPSILON = 1e9
FIG3_DATA = ["mushroom", "adult", "dermatology", "soybean", "cmc"]
OBJECT_DATA = ["mushroom", "adult", "dermatology", "soybean"]
QUICK_DATA = ["mushroom", "soybean"]


def seed_for(base, *keys):
    return int(np.random.SeedSequence([base, *keys]).generate_state(1)[0])


def fit_dp(DPDILCA, codes, cards, epsilon, method, seed):
    model = DPDILCA(
        epsilon,
        method=method,
        context_size=3,
        h=0.3,
        random_state=seed,
        accountant=pt.BudgetAccountant(),
    )
    return model.fit(codes, cardinalities=cards)


def pearson_upper(a, b):
    """Pearson correlation of the strictly upper triangles; None if ``a`` is constant."""
    iu = np.triu_indices(a.shape[0], k=1)
    x, y = a[iu], b[iu]
    if np.ptp(x) == 0:
        return None
    if np.ptp(y) == 0:
        return 0.0
    return float(np.corrcoef(x, y)[0, 1])


def stratified_subsample(labels, size, seed):
    n = len(labels)
    if size <= 0 or n <= size:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    picked = []
    for value in np.unique(labels):
        rows = np.flatnonzero(labels == value)
        take = max(1, round(size * len(rows) / n))
        picked.append(rng.choice(rows, size=min(take, len(rows)), replace=False))
    return np.sort(np.concatenate(picked))


def ward_ari(model, codes, labels, n_classes):
    # ``transform`` embeds the objects so that Euclidean distances are the object
    # distances; Ward on the observations is Ward on ``pairwise_distances``.
    tree = linkage(model.transform(codes), method="ward")
    clusters = fcluster(tree, t=n_classes, criterion="maxclust")
    return float(adjusted_rand_score(labels, clusters))


def knn_accuracy(model, train, y_train, test, y_test):
    # Euclidean 5-NN on the embedding = 5-NN on the precomputed object distances.
    knn = KNeighborsClassifier(n_neighbors=5, algorithm="brute")
    knn.fit(model.transform(train), y_train)
    return float(accuracy_score(y_test, knn.predict(model.transform(test))))


def fig3(data, di, args, DILCA, DPDILCA):
    """Mean Pearson correlation per variant and epsilon (per-attribute epsilon)."""
    codes, cards = data.codes, data.cardinalities
    m = codes.shape[1]
    targets = [j for j in range(m) if cards[j] > 2]
    refs = {"DP-MeanSU": DILCA("mean_su").fit(codes, cardinalities=cards)}
    for name, method in DP_VARIANTS.items():
        if name != "DP-MeanSU":
            refs[name] = fit_dp(DPDILCA, codes, cards, NON_PRIVATE_EPSILON, method, 0)
    out = {}
    for vi, (name, method) in enumerate(DP_VARIANTS.items()):
        ref = refs[name]
        usable = [
            j
            for j in targets
            if pearson_upper(ref.distance_matrix(j), ref.distance_matrix(j)) is not None
        ]
        means = []
        for ei, eps in enumerate(args.epsilons):
            values = []
            for rep in range(args.reps):
                seed = seed_for(args.seed, di, vi, ei, rep, 0)
                model = fit_dp(DPDILCA, codes, cards, eps * m, method, seed)
                for j in usable:
                    r = pearson_upper(ref.distance_matrix(j), model.distance_matrix(j))
                    values.append(r)
            means.append(float(np.mean(values)) if values else float("nan"))
        out[name] = means
        print(
            f"  fig3 {data.name:12s} {name:17s} " + " ".join(f"{v:.3f}" for v in means)
        )
    return out


def fig4(data, di, args, DILCA, DPDILCA):
    """Mean Ward ARI per variant and epsilon (total epsilon)."""
    codes, cards, labels = data.codes, data.cardinalities, data.labels
    rows = stratified_subsample(labels, args.max_objects, seed_for(args.seed, di, 99))
    sub, sub_labels = np.ascontiguousarray(codes[rows]), labels[rows]
    k = data.n_classes
    base = ward_ari(
        DILCA("mean_su").fit(codes, cardinalities=cards), sub, sub_labels, k
    )
    out = {"DILCA_M": [base] * len(args.epsilons), "_objects": len(rows)}
    for vi, (name, method) in enumerate(DP_VARIANTS.items()):
        means = []
        for ei, eps in enumerate(args.epsilons):
            scores = []
            for rep in range(args.reps):
                seed = seed_for(args.seed, di, vi, ei, rep, 1)
                model = fit_dp(DPDILCA, codes, cards, eps, method, seed)
                scores.append(ward_ari(model, sub, sub_labels, k))
            means.append(float(np.mean(scores)))
        out[name] = means
        print(
            f"  fig4 {data.name:12s} {name:17s} " + " ".join(f"{v:.3f}" for v in means)
        )
    print(f"  fig4 {data.name:12s} {'DILCA_M':17s} {base:.3f}")
    return out


def fig5(data, di, args, DILCA, DPDILCA):
    """Mean 5-NN accuracy per variant and epsilon (4-fold stratified CV)."""
    codes, cards, labels = data.codes, data.cardinalities, data.labels
    folds = StratifiedKFold(n_splits=4, shuffle=True, random_state=args.seed)
    splits = list(folds.split(codes, labels))
    acc = {name: np.zeros((len(args.epsilons), args.reps, 4)) for name in DP_VARIANTS}
    base = []
    for fi, (train, test) in enumerate(splits):
        train_codes = np.ascontiguousarray(codes[train])
        tr = train[
            stratified_subsample(
                labels[train], args.max_objects, seed_for(args.seed, di, 98, fi)
            )
        ]
        te = test[
            stratified_subsample(
                labels[test], args.max_objects, seed_for(args.seed, di, 97, fi)
            )
        ]
        Xtr, Xte = np.ascontiguousarray(codes[tr]), np.ascontiguousarray(codes[te])
        ref = DILCA("mean_su").fit(train_codes, cardinalities=cards)
        base.append(knn_accuracy(ref, Xtr, labels[tr], Xte, labels[te]))
        for vi, (name, method) in enumerate(DP_VARIANTS.items()):
            for ei, eps in enumerate(args.epsilons):
                for rep in range(args.reps):
                    seed = seed_for(args.seed, di, vi, ei, rep, 2 + fi)
                    model = fit_dp(DPDILCA, train_codes, cards, eps, method, seed)
                    acc[name][ei, rep, fi] = knn_accuracy(
                        model, Xtr, labels[tr], Xte, labels[te]
                    )
    out = {"DILCA_M": [float(np.mean(base))] * len(args.epsilons)}
    for name in DP_VARIANTS:
        out[name] = [float(v) for v in acc[name].mean(axis=(1, 2))]
        print(
            f"  fig5 {data.name:12s} {name:17s} "
            + " ".join(f"{v:.3f}" for v in out[name])
        )
    print(f"  fig5 {data.name:12s} {'DILCA_M':17s} {np.mean(base):.3f}")
    return out


def markdown(title, results, epsilons, note):
    lines = [f"# {title}", "", note, ""]
    for dataset, series in results.items():
        lines += [f"## {dataset}", ""]
        lines.append("| method | " + " | ".join(f"ε={e:g}" for e in epsilons) + " |")
        lines.append("|---|" + "---|" * len(epsilons))
        for name, values in series.items():
            if name.startswith("_"):
                continue
            lines.append(f"| {name} | " + " | ".join(f"{v:.3f}" for v in values) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(path, title, ylabel, results, epsilons):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(results)
    fig, axes = plt.subplots(1, n, figsize=(3.6 * n, 3.2), squeeze=False)
    for ax, (dataset, series) in zip(axes[0], results.items(), strict=True):
        for name, values in series.items():
            if name.startswith("_"):
                continue
            style = "k--" if name == "DILCA_M" else "o-"
            ax.plot(epsilons, values, style, label=name, markersize=3)
        ax.set_title(dataset)
        ax.set_xlabel("ε")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="3 repetitions, 2 data sets"
    )
    parser.add_argument("--reps", type=int, default=None, help="repetitions (30)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=None)
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--figs", type=int, nargs="+", default=[3, 4, 5])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-objects", type=int, default=4000)
    parser.add_argument("--binning", choices=["uniform", "kmeans"], default="uniform")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    args.reps = args.reps or (3 if args.quick else 30)
    args.epsilons = args.epsilons or (QUICK_EPSILONS if args.quick else PAPER_EPSILONS)
    names = args.datasets or (QUICK_DATA if args.quick else FIG3_DATA)

    DILCA, DPDILCA = pt.DILCA, pt.DPDILCA
    print(
        f"seed={args.seed} reps={args.reps} epsilons={args.epsilons} "
        f"max_objects={args.max_objects} binning={args.binning} datasets={names}"
    )
    print(
        "per-fit random_state = SeedSequence([seed, dataset, variant, eps, rep, fold])"
    )
    data = {name: loaders.load(name, args.binning) for name in names}
    for d in data.values():
        print(" ", d.summary())

    figures = {
        3: (
            "Fig. 3: Pearson correlation, DP vs non-private value distances",
            "Pearson",
            fig3,
            FIG3_DATA,
        ),
        4: ("Fig. 4: ARI of Ward clustering", "ARI", fig4, OBJECT_DATA),
        5: ("Fig. 5: 5-NN accuracy (4-fold CV)", "accuracy", fig5, OBJECT_DATA),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {
        "seed": args.seed,
        "reps": args.reps,
        "epsilons": args.epsilons,
        "max_objects": args.max_objects,
        "binning": args.binning,
        "python": platform.python_version(),
    }
    for number in args.figs:
        title, ylabel, func, allowed = figures[number]
        results, watch = {}, Stopwatch()
        for name in names:
            if name in allowed:
                results[name] = func(
                    data[name], FIG3_DATA.index(name), args, DILCA, DPDILCA
                )
        elapsed = watch.seconds
        budget = (
            "ε is the budget of one target attribute (DPDILCA(ε·m) for the metric)"
            if number == 3
            else "ε is the total budget of the metric (ε/m per attribute)"
        )
        note = (
            f"{budget}; seed {args.seed}, {args.reps} repetitions (the paper: 30), "
            "k = 3, h = 0.3, "
            f"binning {args.binning}, max objects {args.max_objects}; {elapsed:.0f} s."
        )
        stem = args.out / f"paper000_fig{number}"
        stem.with_suffix(".md").write_text(
            markdown(title, results, args.epsilons, note)
        )
        plot(stem.with_suffix(".png"), title, ylabel, results, args.epsilons)
        figure = {**summary, "figure": number, "seconds": elapsed, "results": results}
        stem.with_suffix(".json").write_text(json.dumps(figure, indent=1))
        print(f"fig{number}: {elapsed:.1f} s -> {stem}.{{md,png,json}}")


if __name__ == "__main__":
    main()
