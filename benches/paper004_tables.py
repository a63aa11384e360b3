"""Reproduce Table 5 of Zhang, Mohammed, Dave & Al Hasan (k-anonymity by containment).

Table 5 compares privacy methods on Adult binarised into 19 features (AUC of a linear
SVM and the selected-feature count, SFC); the same table is computed on Semeion (256
binary pixels, label "digit d vs rest", ``--digit``, default 0).

Protocol (paper section 5.2, PAPERS.md §004 "Evaluation"):

- 5-fold stratified cross-validation (``StratifiedKFold(shuffle=True)``, seeded). Each
  method sees only the training fold and returns the data it would release (its
  selected columns, the flipped matrix, or a synthetic DP data set) and the selected
  features; a linear SVM (``sklearn.svm.LinearSVC``, squared hinge = L2 loss, ``C``
  fixed at 1.0 rather than tuned, primal solver) is trained on that release and scored
  by AUC (its decision function) on the untouched real test fold, restricted to the
  selected features. A release with one class only, or no features, scores 0.5.
- k ∈ {5, 8, 11}. Randomized methods (RF, Laplace-DP, Exponential-DP) run
  ``--repetitions`` times (default 10; 2 with ``--quick``); the table shows the mean
  over repetitions of the 5-fold mean AUC, ± the standard deviation over repetitions.
  Deterministic methods show the 5-fold mean (± the std over folds).
- SFC: mean number of selected features over the folds; for RF, the percentage of
  flipped cells instead (RF keeps every feature).
- Laplace-DP / Exponential-DP at ε ∈ {0.1, 0.5, 1.0} select ``t`` features, ``t`` the
  number Greedy-DistCnt (``KACSelector(k, method="greedy_distcnt")``) selects on the
  same training fold at that k; when it is not available, ``t = --t`` (default 8).
  ``t`` is capped at 23 (a full-domain histogram of ``2^(t+1)`` cells must stay within
  the estimators' default ``max_cells = 2^24``); the json records the ``t`` of every
  fold before the cap.

Methods are a registry (``METHODS``): name → callable ``(B_train, y_train, k, rng,
t=...) -> (X_release, y_release, selected)``. The k-AC selectors and the k-anonymity /
CM greedy baselines are looked up in ``privtab`` by name; if one is missing, its rows are
skipped with a printed note.

The maximal-set methods (``KACSelector(method="maximal" | "maximal_feasible")``, top_t
= 10) enumerate with ``max_sets`` / ``time_limit`` (``--max-sets``, ``--time-limit``):
the table marks with † a k where an enumeration stopped early in some fold (then the
choice is among the sets found; with ``time_limit`` it depends on the machine's speed),
and the json counts those folds (``incomplete_folds``).

``--methods`` keeps only the methods whose name contains one of the given
comma-separated substrings (e.g. ``--methods RF,DP``).

Run from the repository root::

    python benches/paper004_tables.py            # both data sets, 10 repetitions
    python benches/paper004_tables.py --quick    # 2 repetitions

Writes ``benches/results/paper004_table5_adult.{md,json}`` and
``paper004_table_semeion.{md,json}`` (or into ``--out``).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC

sys.path.insert(0, str(Path(__file__).resolve().parent))

import privtab as pt

from _paper004_data import load_adult19, load_semeion
from _timing import Stopwatch

KS = (5, 8, 11)
EPSILONS = (0.1, 0.5, 1.0)
MAX_DP_T = 23
Release = tuple[np.ndarray, np.ndarray, np.ndarray]


# Limits of the maximal-set enumerations (set from the command line in main): on
# Semeion at support 5 the maximal frequent itemsets are far too many to list.
LIMITS: dict[str, Any] = {"max_sets": 100_000, "time_limit": 5.0}
# Folds of the current (method, k) whose maximal-set enumeration stopped at a limit.
INCOMPLETE: list[int] = []


def _selector_method(factory: Callable[[int], Any]) -> Callable[..., Release]:
    """A feature selector: release the selected columns of the training fold."""

    def run(B: np.ndarray, y: np.ndarray, k: int, rng: Any, **_: Any) -> Release:
        selector = factory(k).fit(B, y)
        if not getattr(selector, "complete_", True):
            INCOMPLETE.append(1)
        selected = np.flatnonzero(selector.get_support())
        return B[:, selected], y, selected

    return run


def _maximal(method: str) -> Callable[[Any], Callable[[int], Any]]:
    return lambda cls: lambda k: cls(k, method=method, **LIMITS)


def _optional(name: str, build: Callable[[Any], Callable[[int], Any]]) -> Any:
    cls = getattr(pt, name, None)
    return None if cls is None else _selector_method(build(cls))


def _all_features(B: np.ndarray, y: np.ndarray, k: int, rng: Any, **_: Any) -> Release:
    return B, y, np.arange(B.shape[1])


def _rf(B: np.ndarray, y: np.ndarray, k: int, rng: Any, **_: Any) -> Release:
    result = pt.randomization_flipping(B, k, random_state=rng)
    return result.data, y, np.arange(B.shape[1])


def _dp(cls: Any, epsilon: float) -> Callable[..., Release]:
    def run(B: np.ndarray, y: np.ndarray, k: int, rng: Any, *, t: int) -> Release:
        model = cls(
            epsilon,
            min(t, B.shape[1], MAX_DP_T),
            random_state=rng,
            accountant=pt.BudgetAccountant(),
            classes=[0, 1],  # both data sets have 0/1 labels
        ).fit(B, y)
        return model.synthetic_X_, model.synthetic_y_, np.flatnonzero(model.support_)

    return run


# name → (callable or None when missing in this build, randomized?)
METHODS: dict[str, tuple[Callable[..., Release] | None, bool]] = {
    "Greedy-Ham (k-AC)": (
        _optional("KACSelector", lambda c: lambda k: c(k, method="greedy_ham")),
        False,
    ),
    "Greedy-DistCnt (k-AC)": (
        _optional("KACSelector", lambda c: lambda k: c(k, method="greedy_distcnt")),
        False,
    ),
    "Maximal (k-AC)": (_optional("KACSelector", _maximal("maximal")), False),
    "Maximal-feasible (k-AC)": (
        _optional("KACSelector", _maximal("maximal_feasible")),
        False,
    ),
    "Greedy-Ham (k-anonymity)": (
        _optional("KAnonymityGreedy", lambda c: lambda k: c(k, utility="ham")),
        False,
    ),
    "Greedy-DistCnt (k-anonymity)": (
        _optional("KAnonymityGreedy", lambda c: lambda k: c(k, utility="distcnt")),
        False,
    ),
    "CM Greedy": (_optional("CMGreedy", lambda c: lambda k: c(k)), False),
    "RF": (_rf, True),
    **{
        f"Laplace-DP (ε={eps:g})": (_dp(pt.LaplaceDPRelease, eps), True)
        for eps in EPSILONS
    },
    **{
        f"Exponential-DP (ε={eps:g})": (_dp(pt.ExponentialDPRelease, eps), True)
        for eps in EPSILONS
    },
    "All features (no privacy)": (_all_features, False),
}


def svm_auc(
    X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray
) -> float:
    """AUC on the real test fold of a linear SVM trained on a release."""
    if X_train.shape[1] == 0 or len(np.unique(y_train)) < 2:
        return 0.5
    model = LinearSVC(C=1.0, dual=False, max_iter=5000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train.astype(np.float64), y_train.astype(np.int64))
    return float(roc_auc_score(y_test, model.decision_function(X_test)))


def greedy_t(B: np.ndarray, y: np.ndarray, k: int, default: int) -> int:
    """Features Greedy-DistCnt selects at k (the paper's t), or ``default``."""
    cls = getattr(pt, "KACSelector", None)
    if cls is None:
        return default
    count = int(cls(k, method="greedy_distcnt").fit(B, y).get_support().sum())
    return max(count, 1)


def run_table(
    B: np.ndarray, y: np.ndarray, args: argparse.Namespace, dataset: str
) -> dict:
    folds = list(StratifiedKFold(5, shuffle=True, random_state=args.seed).split(B, y))
    results: dict[str, dict[str, Any]] = {}
    ts: dict[int, list[int]] = {}
    for k in KS:
        ts[k] = [greedy_t(B[train], y[train], k, args.t) for train, _ in folds]
    for index, (name, (method, randomized)) in enumerate(METHODS.items()):
        if args.methods and not any(part in name for part in args.methods):
            continue
        if method is None:
            print(f"  {name}: not available in this build, skipped")
            continue
        results[name] = {}
        for k in KS:
            watch = Stopwatch()
            INCOMPLETE.clear()
            reps = args.repetitions if randomized else 1
            aucs = np.empty((reps, len(folds)))
            sfc = np.empty((reps, len(folds)))
            for r in range(reps):
                for f, (train, test) in enumerate(folds):
                    rng = np.random.SeedSequence([args.seed, index, k, r, f])
                    X_rel, y_rel, sel = method(
                        B[train], y[train], k, np.random.default_rng(rng), t=ts[k][f]
                    )
                    aucs[r, f] = svm_auc(X_rel, y_rel, B[test][:, sel], y[test])
                    # RF keeps the rows in order: its flipped cells are a recount.
                    sfc[r, f] = (
                        100 * np.mean(X_rel != B[train]) if method is _rf else len(sel)
                    )
            per_rep = aucs.mean(axis=1)
            entry = {
                "auc": float(per_rep.mean()),
                "auc_std": float(per_rep.std(ddof=1) if reps > 1 else aucs.std()),
                "sfc": float(sfc.mean()),
                "sfc_is_flip_percent": method is _rf,
                "t": ts[k] if name.startswith(("Laplace", "Exponential")) else None,
                "seconds": watch.seconds,
                "incomplete_folds": len(INCOMPLETE),
            }
            results[name][str(k)] = entry
            unit = "% flipped" if method is _rf else " features"
            stopped = (
                f", enumeration stopped at a limit in {len(INCOMPLETE)} folds"
                if INCOMPLETE
                else ""
            )
            print(
                f"  {dataset} {name} k={k}: AUC {entry['auc']:.3f} ± "
                f"{entry['auc_std']:.3f}, SFC {entry['sfc']:.2f}{unit} "
                f"({entry['seconds']:.1f} s{stopped})",
                flush=True,
            )
    return results


def markdown(results: dict, title: str, notes: str) -> str:
    lines = [f"# {title}", "", notes, ""]
    header = "| Method | " + " | ".join(f"k = {k}: AUC (SFC)" for k in KS)
    header += " | seconds (k = " + " / ".join(map(str, KS)) + ") |"
    lines += [header, "|---" * (len(KS) + 2) + "|"]
    for name, per_k in results.items():
        cells = []
        for k in KS:
            e = per_k[str(k)]
            sfc = f"{e['sfc']:.2f}%" if e["sfc_is_flip_percent"] else f"{e['sfc']:.1f}"
            mark = "†" * bool(e.get("incomplete_folds"))
            cells.append(f"{e['auc']:.3f} ± {e['auc_std']:.3f} ({sfc}){mark}")
        seconds = " / ".join(f"{per_k[str(k)]['seconds']:.1f}" for k in KS)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {seconds} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset", choices=["adult", "semeion", "both"], default="both"
    )
    parser.add_argument("--digit", type=int, default=0, help="Semeion positive digit")
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="2 repetitions")
    parser.add_argument(
        "--t", type=int, default=8, help="DP feature count without Greedy-DistCnt"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-sets",
        type=int,
        default=LIMITS["max_sets"],
        help="maximal-set methods: stop each enumeration after this many sets",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=LIMITS["time_limit"],
        help="maximal-set methods: stop each enumeration after this many seconds",
    )
    parser.add_argument(
        "--methods",
        type=lambda text: [part for part in text.split(",") if part],
        default=[],
        help="comma-separated substrings of the method names to run (default all)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.repetitions = 2
    LIMITS.update(max_sets=args.max_sets, time_limit=args.time_limit)
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = []
    if args.dataset in ("adult", "both"):
        jobs.append(("adult", "paper004_table5_adult", load_adult19))
    if args.dataset in ("semeion", "both"):
        jobs.append(
            ("semeion", "paper004_table_semeion", lambda: load_semeion(args.digit))
        )
    for dataset, stem, loader in jobs:
        B, y, _ = loader()
        print(
            f"{dataset}: {B.shape[0]} rows × {B.shape[1]} features, {y.sum()} positive"
        )
        watch = Stopwatch()
        results = run_table(B, y, args, dataset)
        label = "Adult-19" if dataset == "adult" else f"Semeion (digit {args.digit})"
        notes = (
            f"{label}: {B.shape[0]} rows, {B.shape[1]} binary features, "
            f"{int(y.sum())} positive. Linear SVM (C = 1), 5-fold stratified CV AUC; "
            f"randomized methods: mean ± std over {args.repetitions} repetitions. SFC: "
            "selected features (RF: % of flipped cells). DP methods select t = the "
            "Greedy-DistCnt count at k when available (at most 23), else "
            f"t = {args.t}. Missing rows: methods not in this build. Maximal methods "
            f"compare the top_t = 10 largest maximal sets; each enumeration stops "
            f"after {args.max_sets} sets or {args.time_limit:g} s: † marks a k where "
            "it stopped in at least one fold (the json counts the folds). seconds: "
            "wall time of the method over the 5 folds and all repetitions."
        )
        (args.out / f"{stem}.md").write_text(markdown(results, label, notes))
        payload = {
            "dataset": label,
            "shape": list(B.shape),
            "positives": int(y.sum()),
            "repetitions": args.repetitions,
            "seed": args.seed,
            "t_default": args.t,
            "max_sets": args.max_sets,
            "time_limit": args.time_limit,
            "top_t": 10,
            "ks": list(KS),
            "epsilons": list(EPSILONS),
            "seconds": watch.seconds,
            "python": platform.python_version(),
            "privtab": pt.__version__,
            "results": results,
        }
        (args.out / f"{stem}.json").write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.out / stem}.{{md,json}}")


if __name__ == "__main__":
    main()
