"""Reproduce Figs. 3–6 of Soria-Comas et al. (iDP by individual-ranking microaggregation).

Data (``../shared/data``): CASC Census (1,080 records, the paper's 9 attributes AFNLWGT,
AGI, EMCONTRB, FEDTAX, STATETAX, TAXINC, POTHVAL, INTVAL, FICA) and Wine Quality white
(4,898 records, the 11 physicochemical attributes).

- **Figs. 3–4, information loss:** mean SSE (the paper's eq. 4–5,
  :func:`privtab.mean_sse`) against k for DP (plain Laplace, ``mechanism="dp"``,
  ``k=1``: a horizontal line), DP-UM, iDP-LS and iDP-CBLS, at ε ∈ {0.01, 0.1, 1} and
  bounds ``[0, α·max]`` with α ∈ {1.5, 3} (declared to the masker, as the paper derives
  them), ε split equally over the attributes.
- **Figs. 5–6, classification:** random-forest F-measure of each class, trained on the
  first 66 % of the masked records and tested on the remaining original records, for
  iDP-LS and iDP-CBLS and the non-private upper bound (trained on original records).
  Classes as in the paper: Census ERNVAL ≤ 30,000 vs > 30,000 (ERNVAL is not one of
  the masked attributes); Wine quality ≤ 6 ("Not Excellent") vs > 6 ("Excellent").
- Every point is the mean of ``--reps`` runs (10, as in the paper).

Run from the repository root::

    python benches/paper002_figs.py             # 10 runs per point
    python benches/paper002_figs.py --reps 2    # quicker

Writes ``benches/results/paper002_fig{3,4,5,6}.{md,json,png}``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

import privtab as pt

from _timing import Stopwatch

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"
EPSILONS = (0.01, 0.1, 1.0)
ALPHAS = (1.5, 3.0)
CENSUS_ATTRIBUTES = [
    "AFNLWGT",
    "AGI",
    "EMCONTRB",
    "FEDTAX",
    "STATETAX",
    "TAXINC",
    "POTHVAL",
    "INTVAL",
    "FICA",
]
CENSUS_KS = (3, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100)
WINE_KS = (3, 5, 10, 15, 25, 50, 75, 100, 150, 200, 250, 300, 350, 400)
METHODS = {"DP-UM": "dp", "iDP-LS": "idp_ls", "iDP-CBLS": "idp_cbls"}


def load(name: str) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """Attributes to mask, binary class labels, attribute names, class names."""
    if name == "census":
        frame = pd.read_csv(DATA / "casc_census" / "CASCrefmicrodata.csv")
        X = frame[CENSUS_ATTRIBUTES].to_numpy(dtype=float)
        y = (frame["ERNVAL"].to_numpy() > 30_000).astype(int)
        return X, y, CENSUS_ATTRIBUTES, ["<=30K", ">30K"]
    frame = pd.read_csv(DATA / "wine_quality_white" / "winequality-white.csv", sep=";")
    attributes = [c for c in frame.columns if c != "quality"]
    X = frame[attributes].to_numpy(dtype=float)
    y = (frame["quality"].to_numpy() > 6).astype(int)
    return X, y, attributes, ["Not Excellent", "Excellent"]


def mask(X, mechanism, k, epsilon, alpha, seed):
    bounds = [(0.0, alpha * float(X[:, j].max())) for j in range(X.shape[1])]
    masker = pt.MicroaggregationMasker(
        k,
        epsilon,
        mechanism=mechanism,
        bounds=bounds,
        random_state=seed,
        accountant=pt.BudgetAccountant(),
    )
    return masker.fit_transform(X)


def information_loss(X, ks, reps, seed0):
    """mean SSE[alpha][epsilon][method] -> list over ks (DP: one value)."""
    out: dict = {}
    for alpha in ALPHAS:
        for epsilon in EPSILONS:
            row = {}
            plain = [
                pt.mean_sse(X, mask(X, "dp", 1, epsilon, alpha, seed0 + r))
                for r in range(reps)
            ]
            row["DP"] = float(np.mean(plain))
            for name, mechanism in METHODS.items():
                row[name] = [
                    float(
                        np.mean(
                            [
                                pt.mean_sse(
                                    X, mask(X, mechanism, k, epsilon, alpha, seed0 + r)
                                )
                                for r in range(reps)
                            ]
                        )
                    )
                    for k in ks
                ]
            out.setdefault(str(alpha), {})[str(epsilon)] = row
    return out


def f_measures(X_train, y_train, X_test, y_test, seed):
    forest = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=2)
    forest.fit(X_train, y_train)
    return f1_score(y_test, forest.predict(X_test), average=None, labels=[0, 1])


def classification(X, y, ks, reps, seed0):
    split = round(0.66 * len(X))
    upper = np.mean(
        [
            f_measures(X[:split], y[:split], X[split:], y[split:], seed0 + r)
            for r in range(reps)
        ],
        axis=0,
    )
    out: dict = {"original": upper.tolist()}
    for alpha in ALPHAS:
        for epsilon in EPSILONS:
            row = {}
            for name in ("iDP-LS", "iDP-CBLS"):
                per_k = []
                for k in ks:
                    scores = []
                    for r in range(reps):
                        masked = mask(X, METHODS[name], k, epsilon, alpha, seed0 + r)
                        scores.append(
                            f_measures(
                                masked[:split],
                                y[:split],
                                X[split:],
                                y[split:],
                                seed0 + r,
                            )
                        )
                    per_k.append(np.mean(scores, axis=0).tolist())
                row[name] = per_k
            out.setdefault(str(alpha), {})[str(epsilon)] = row
    return out


def sse_markdown(title, ks, table):
    lines = [f"## {title}", ""]
    for alpha, by_eps in table.items():
        for epsilon, row in by_eps.items():
            lines.append(f"### α = {alpha}, ε = {epsilon} (DP, no k: {row['DP']:.3g})")
            lines.append("")
            lines.append("| k | " + " | ".join(METHODS) + " |")
            lines.append("|---:|" + "---:|" * len(METHODS))
            for i, k in enumerate(ks):
                cells = " | ".join(f"{row[m][i]:.3g}" for m in METHODS)
                lines.append(f"| {k} | {cells} |")
            lines.append("")
    return "\n".join(lines)


def f_markdown(title, ks, table, class_names):
    original = table["original"]
    lines = [
        f"## {title}",
        "",
        f"Upper bound (original training data): {class_names[0]} "
        f"{original[0]:.3f}, {class_names[1]} {original[1]:.3f}",
        "",
    ]
    for alpha, by_eps in table.items():
        if alpha == "original":
            continue
        for epsilon, row in by_eps.items():
            lines.append(f"### α = {alpha}, ε = {epsilon}")
            lines.append("")
            header = " | ".join(
                f"{m} {c}" for m in ("iDP-LS", "iDP-CBLS") for c in class_names
            )
            lines.append(f"| k | {header} |")
            lines.append("|---:|" + "---:|" * 4)
            for i, k in enumerate(ks):
                cells = " | ".join(
                    f"{row[m][i][c]:.3f}"
                    for m in ("iDP-LS", "iDP-CBLS")
                    for c in (0, 1)
                )
                lines.append(f"| {k} | {cells} |")
            lines.append("")
    return "\n".join(lines)


def plot_sse(path, title, ks, table):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(EPSILONS), len(ALPHAS), figsize=(10, 11), sharex=True)
    for col, alpha in enumerate(ALPHAS):
        for row_i, epsilon in enumerate(EPSILONS):
            ax = axes[row_i, col]
            row = table[str(alpha)][str(epsilon)]
            ax.axhline(row["DP"], color="black", linestyle="--", label="DP")
            for name in METHODS:
                ax.plot(ks, row[name], marker="o", markersize=3, label=name)
            ax.set_yscale("log")
            ax.set_title(f"ε = {epsilon}, α = {alpha}")
            ax.set_xlabel("k")
            ax.set_ylabel("mean SSE")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_f(path, title, ks, table, class_names):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for c, ax in enumerate(axes):
        ax.axhline(
            table["original"][c], color="black", linestyle="--", label="original"
        )
        for alpha in ALPHAS:
            for epsilon in EPSILONS:
                row = table[str(alpha)][str(epsilon)]
                for name, style in (("iDP-LS", ":"), ("iDP-CBLS", "-")):
                    ax.plot(
                        ks,
                        [v[c] for v in row[name]],
                        linestyle=style,
                        label=f"{name} ε={epsilon} α={alpha}",
                    )
        ax.set_title(class_names[c])
        ax.set_xlabel("k")
        ax.set_ylabel("F-measure")
    axes[1].legend(fontsize=6, ncol=2)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20231006)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--skip-classification", action="store_true", help="only Figs. 3–4"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for number, name, ks in ((3, "census", CENSUS_KS), (4, "wine", WINE_KS)):
        X, y, _, class_names = load(name)
        with Stopwatch() as watch:
            table = information_loss(X, ks, args.reps, args.seed)
        title = f"Fig. {number}: {name}, mean SSE vs k ({args.reps} runs per point)"
        stem = args.out / f"paper002_fig{number}"
        stem.with_suffix(".json").write_text(
            json.dumps({"ks": ks, "reps": args.reps, "mean_sse": table}, indent=1)
        )
        stem.with_suffix(".md").write_text(sse_markdown(title, ks, table) + "\n")
        plot_sse(stem.with_suffix(".png"), title, ks, table)
        print(f"{title}: {watch.seconds:.1f} s")
        if args.skip_classification:
            continue
        with Stopwatch() as watch:
            table = classification(X, y, ks, args.reps, args.seed)
        title = (
            f"Fig. {number + 2}: {name}, random-forest F-measure per class vs k "
            f"({args.reps} runs per point)"
        )
        stem = args.out / f"paper002_fig{number + 2}"
        stem.with_suffix(".json").write_text(
            json.dumps(
                {"ks": ks, "reps": args.reps, "classes": class_names, "f": table},
                indent=1,
            )
        )
        stem.with_suffix(".md").write_text(
            f_markdown(title, ks, table, class_names) + "\n"
        )
        plot_f(stem.with_suffix(".png"), title, ks, table, class_names)
        print(f"{title}: {watch.seconds:.1f} s")


if __name__ == "__main__":
    main()
