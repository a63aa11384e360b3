"""Test-only NumPy stand-in for ``privtab.DILCA`` / ``privtab.DPDILCA``.

Used by the paper-000 benchmark scripts ONLY when the installed ``privtab`` has no
``DILCA``, so that the scripts can be run end to end before the library classes exist.
Same public surface as the library contract (API.md, "Paper 000"): ``fit(X,
cardinalities=None)``, ``contexts_``, ``distance_matrices_``, ``distance_matrix(j)``,
``pairwise_distances(X, Y=None)``.

DILCA_M / DILCA_RR follow PAPERS.md 000 exactly (slow, one ``np.bincount`` per table).
The DP variants (mean_su, max_relevance, max_dependency) follow the same budget split
and sensitivities, sampled with NumPy; ``method="baseline"`` is not provided. Nothing
here is a vetted differentially private implementation: never import it from the
library or the tests.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

NOTICE = (
    "!" * 78 + "\n"
    "!! privtab has no DILCA: using the NumPy STAND-IN from benches/_dilca_standin.py\n"
    "!! (test-only; numbers are NOT those of the library)\n" + "!" * 78
)


def _codes(X, cardinalities):
    codes = getattr(X, "codes", X)
    if cardinalities is None:
        cardinalities = getattr(X, "cardinalities", None)
    codes = np.asarray(codes, dtype=np.int64)
    if cardinalities is None:
        cardinalities = codes.max(axis=0) + 1
    return codes, np.asarray(cardinalities, dtype=np.int64)


_CACHE: dict = {}


def _entropy(counts):
    counts = counts[counts > 0].astype(np.float64)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def _joint(columns, cards):
    key = np.zeros(columns[0].shape[0], dtype=np.int64)
    for col, k in zip(columns, cards, strict=True):
        key = key * int(k) + col
    return key


def _table(y, x, ky, kx):
    return np.bincount(y * kx + x, minlength=ky * kx).reshape(ky, kx).astype(float)


def _distance(tables, context_cards):
    ky = tables[0].shape[0]
    acc = np.zeros((ky, ky))
    for t in tables:
        colsum = t.sum(axis=0)
        p = np.divide(t, colsum, out=np.zeros_like(t), where=colsum > 0)
        diff = p[:, None, :] - p[None, :, :]
        acc += (diff**2).sum(axis=2)
    d = np.sqrt(acc / float(sum(context_cards)))
    np.fill_diagonal(d, 0.0)
    return d


class _Base:
    def _stats(self, codes, cards):
        m = codes.shape[1]
        h = np.array([_entropy(np.bincount(codes[:, j])) for j in range(m)])
        hxy = np.zeros((m, m))
        for i, j in itertools.combinations(range(m), 2):
            key = _joint([codes[:, i], codes[:, j]], [cards[i], cards[j]])
            hxy[i, j] = hxy[j, i] = _entropy(np.bincount(key))
        return h, hxy

    @staticmethod
    def _su(h, hxy):
        m = len(h)
        su = np.zeros((m, m))
        for i, j in itertools.permutations(range(m), 2):
            s = h[i] + h[j]
            su[i, j] = 0.0 if s <= 0 else 2.0 * (s - hxy[i, j]) / s
        return su

    def distance_matrix(self, j):
        return self.distance_matrices_[j]

    def pairwise_distances(self, X, Y=None):
        a = np.asarray(getattr(X, "codes", X), dtype=np.int64)
        b = a if Y is None else np.asarray(getattr(Y, "codes", Y), dtype=np.int64)
        out = np.zeros((a.shape[0], b.shape[0]))
        for j, d in enumerate(self.distance_matrices_):
            out += d[a[:, j][:, None], b[:, j][None, :]] ** 2
        return np.sqrt(out)


class DILCA(_Base):
    """Non-private DILCA_M (``"mean_su"``) or DILCA_RR (``"relevance_redundancy"``)."""

    def __init__(self, context="mean_su", *, sigma=1.0):
        self.context = context
        self.sigma = sigma

    def fit(self, X, cardinalities=None):
        codes, cards = _codes(X, cardinalities)
        m = codes.shape[1]
        h, hxy = self._stats(codes, cards)
        su = self._su(h, hxy)
        self.contexts_, self.distance_matrices_ = [], []
        for y in range(m):
            others = [x for x in range(m) if x != y]
            if self.context == "mean_su":
                mean = su[y, others].mean() if others else 0.0
                ctx = [x for x in others if su[x, y] >= self.sigma * mean]
            else:
                order = sorted(others, key=lambda x: (-su[x, y], x))
                ctx = order[:1]
                for c in order[1:]:
                    if su[c, y] > max(su[c, s] for s in ctx):
                        ctx.append(c)
            tables = [_table(codes[:, y], codes[:, x], cards[y], cards[x]) for x in ctx]
            self.contexts_.append(np.array(ctx, dtype=np.intp))
            self.distance_matrices_.append(
                _distance(tables, [cards[x] for x in ctx])
                if ctx
                else np.zeros((cards[y], cards[y]))
            )
        return self


def _gumbel_pick(rng, log_weights):
    return int(np.argmax(log_weights + rng.gumbel(size=len(log_weights))))


class DPDILCA(_Base):
    """Crude DP-DILCA stand-in: ε/m per attribute, h for the context, 1-h for tables."""

    def __init__(
        self,
        epsilon,
        *,
        method="max_relevance",
        context_size=3,
        h=0.3,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.method = method
        self.context_size = context_size
        self.h = h
        self.random_state = random_state
        self.accountant = accountant

    @staticmethod
    def _h_subset(codes, cards, subset, table_key):
        # Joint entropies do not depend on epsilon: memoised across fits of one table.
        key = (table_key, subset)
        if key not in _CACHE:
            cols = [codes[:, x] for x in subset]
            _CACHE[key] = _entropy(
                np.bincount(_joint(cols, [cards[x] for x in subset]))
            )
        return _CACHE[key]

    def fit(self, X, cardinalities=None):
        if self.method == "baseline":
            raise NotImplementedError("the stand-in has no baseline DP-DILCA")
        codes, cards = _codes(X, cardinalities)
        rng = np.random.default_rng(self.random_state)
        n, m = codes.shape
        table_key = (codes.shape, hash(codes.tobytes()))
        eps_y = self.epsilon / m
        gs = (1.0 / n) * (1.0 / math.log(2) + math.log2(n))
        h, hxy = self._stats(codes, cards)
        k = min(self.context_size, m - 1)
        self.contexts_, self.distance_matrices_ = [], []
        for y in range(m):
            others = [x for x in range(m) if x != y]
            eps_ctx = eps_y * self.h
            if self.method == "mean_su":
                eps_h = eps_ctx / (2 * m - 1)
                scale = gs / eps_h
                hy = h[y] + rng.laplace(0, scale)
                su = []
                for x in others:
                    hx = h[x] + rng.laplace(0, scale)
                    hj = hxy[x, y] + rng.laplace(0, scale)
                    s = hx + hy
                    su.append(0.0 if s <= 0 else 2.0 * (s - hj) / s)
                su = np.array(su)
                ctx = [x for x, s in zip(others, su, strict=True) if s >= su.mean()]
                if not ctx:
                    ctx = [others[int(np.argmax(su))]]
            elif self.method == "max_relevance":
                util = np.array([h[x] - hxy[x, y] for x in others])
                remaining = list(range(len(others)))
                ctx = []
                for _ in range(k):
                    logw = eps_ctx * util[remaining] / (4 * k * gs)
                    ctx.append(others[remaining.pop(_gumbel_pick(rng, logw))])
            elif self.method == "max_dependency":
                subsets = list(itertools.combinations(others, k))
                util = np.array(
                    [
                        self._h_subset(codes, cards, s, table_key)
                        - self._h_subset(
                            codes, cards, tuple(sorted((*s, y))), table_key
                        )
                        for s in subsets
                    ]
                )
                ctx = list(subsets[_gumbel_pick(rng, eps_ctx * util / (4 * gs))])
            else:
                raise ValueError(f"unknown method {self.method!r}")
            scale = 2.0 * len(ctx) / (eps_y * (1.0 - self.h))
            tables = []
            for x in ctx:
                t = _table(codes[:, y], codes[:, x], cards[y], cards[x])
                tables.append(np.maximum(t + rng.laplace(0, scale, size=t.shape), 0.0))
            self.contexts_.append(np.array(sorted(ctx), dtype=np.intp))
            self.distance_matrices_.append(_distance(tables, [cards[x] for x in ctx]))
        self.epsilon_spent_ = float(self.epsilon)
        return self
