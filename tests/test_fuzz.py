"""Fuzzing of every public function and estimator with malformed and unusual input.

Every call runs in a child process (:class:`_fuzz.FuzzWorker`) under a memory and a
time limit, so that a crash, an abort, a hang or a runaway allocation is reported as a
failure of the example that caused it instead of ending the test run.

Two properties, for every public name of privtab (:data:`TARGETS`):

* **Malformed input** (wrong shapes and dtypes, NaN and infinities, empty input, 0
  rows or columns, huge cardinalities, negative or out-of-range codes, non-binary
  "binary" input, ε ≤ 0, NaN or infinite, k above n or m, a spent budget, ...) raises
  a ``ValueError`` or ``TypeError`` (``DomainError`` and ``BudgetExceededError``
  included) whose message names the argument: never a ``PanicException``, another
  exception, a crash, a hang, a numeric warning (a NaN on its way to the answer) or a
  silent answer. A few inputs are odd rather than wrong (a huge but valid cardinality,
  a pandas categorical); for those an answer is allowed, a crash is not.
* **Odd but valid layouts** (Fortran order, big-endian, read-only, non-contiguous
  views, lists, pandas and polars frames) give the same answer as the C-contiguous
  native array, seeds included.

``PRIVTAB_FUZZ_EXAMPLES`` sets the examples per target and property (CI: the default
below); ``benches/fuzz_report.py`` runs more and writes the counts per function to
``benches/results/fuzz.md``, from the JSON that ``PRIVTAB_FUZZ_COUNTS`` names.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from _fuzz import Build, FuzzWorker, Outcome, Program, Ref, Step, Wrap
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.fuzz

#: Examples per target and property; CI keeps the whole file within about 5 minutes.
EXAMPLES = int(os.environ.get("PRIVTAB_FUZZ_EXAMPLES", "80"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=os.environ.get("PRIVTAB_FUZZ_RANDOM") is None,
    database=None,
)
#: Calls made per (target, property), and the distinct malformations or layouts they
#: tried: written to PRIVTAB_FUZZ_COUNTS at the end.
COUNTS: Counter[tuple[str, str]] = Counter()
KINDS: dict[tuple[str, str], set[str]] = {}

SEED = 20240601
NAN, INF = math.nan, math.inf


# What a malformed argument must produce -------------------------------------------------
@dataclass(frozen=True)
class Bad:
    """A malformed value for one argument and what the call must do with it.

    ``names``: the message must name one of them. ``lenient``: the input is odd rather
    than wrong (a huge but valid size, say), so an answer is allowed too, and so is a
    ``MemoryError`` that names the argument; never a crash, a hang or another
    exception. ``errors``: exception classes accepted besides ``ValueError`` and
    ``TypeError``.
    """

    value: Any
    names: tuple[str, ...]
    what: str
    lenient: bool = False
    errors: tuple[str, ...] = ()


def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    words = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{words})(?![A-Za-z0-9_])")


def assert_clear_error(outcome: Outcome, bad: Bad, where: str = "") -> None:
    """The property of a malformed call (see the module docstring)."""
    context = f"{where}: {bad.what} -> {outcome.describe()}"
    assert outcome.kind in ("ok", "raised"), context
    if outcome.kind == "ok":
        assert bad.lenient, f"accepted silently: {context}"
        return
    accepted = {"ValueError", "TypeError", *bad.errors}
    if bad.lenient:
        accepted.add("MemoryError")
    assert accepted & set(outcome.bases), f"wrong exception: {context}"
    assert _names_pattern(bad.names).search(outcome.message), (
        f"the message does not name {' or '.join(bad.names)}: {context}"
    )


def drop(bads: list[Bad], *whats: str) -> list[Bad]:
    """``bads`` without the malformations named ``whats`` (valid for some function)."""
    return [b for b in bads if b.what not in whats]


# Valid data ------------------------------------------------------------------------------
@st.composite
def categorical(
    draw, *, min_rows=4, max_rows=18, min_cols=1, max_cols=4, max_card=4, y_classes=2
):
    """Codes ``X`` (int64), their cardinalities and labels ``y`` holding every class."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(min_cols, max_cols))
    cards = [draw(st.integers(2, max_card)) for _ in range(d)]
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = np.stack([rng.integers(0, c, n) for c in cards], axis=1).astype(np.int64)
    y = rng.integers(0, y_classes, n).astype(np.int64)
    y[:y_classes] = np.arange(y_classes)
    return {"X": X, "cardinalities": cards, "y": y}


@st.composite
def numeric(draw, *, min_rows=6, max_rows=24, min_cols=1, max_cols=4):
    """Floats ``X`` in [-3, 3] and binary labels ``y`` holding both classes."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(min_cols, max_cols))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = np.round(rng.uniform(-3, 3, (n, d)), 3)
    y = rng.integers(0, 2, n).astype(np.int64)
    y[:2] = [0, 1]
    return {"X": X, "y": y}


@st.composite
def binary(draw, *, min_rows=4, max_rows=16, min_cols=2, max_cols=6):
    """A 0/1 matrix ``B`` (uint8) and binary labels ``y`` holding both classes."""
    n = draw(st.integers(min_rows, max_rows))
    m = draw(st.integers(min_cols, max_cols))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    B = (rng.random((n, m)) < 0.5).astype(np.uint8)
    y = rng.integers(0, 2, n).astype(np.int64)
    y[:2] = [0, 1]
    return {"B": B, "y": y}


# Malformed values, by kind of argument -------------------------------------------------------
def bad_real(name, *, optional=False, zero_ok=False, negative_ok=False) -> list[Bad]:
    """A positive real parameter (ε, a sensitivity, C, σ, ...)."""
    out = [
        Bad(NAN, (name,), "nan"),
        Bad(INF, (name,), "inf"),
        Bad(-INF, (name,), "-inf"),
        Bad("1.0", (name,), "str"),
        Bad(True, (name,), "bool"),
        Bad(1j, (name,), "complex"),
        Bad([1.0], (name,), "list"),
    ]
    if not zero_ok:
        out.append(Bad(0.0, (name,), "zero"))
    if not negative_ok:
        out.append(Bad(-1.0, (name,), "negative"))
    if not optional:
        out.append(Bad(None, (name,), "None"))
    return out


def bad_unit(name, *, closed_high=False) -> list[Bad]:
    """A parameter in (0, 1) or (0, 1]."""
    out = [
        Bad(-0.5, (name,), "negative"),
        Bad(1.5, (name,), "above 1"),
        Bad(NAN, (name,), "nan"),
        Bad(INF, (name,), "inf"),
        Bad("0.5", (name,), "str"),
        Bad(None, (name,), "None"),
    ]
    if not closed_high:
        out.append(Bad(1.0, (name,), "one"))
    return out


def bad_int(name, *, minimum=1, maximum=None, optional=False, also=()) -> list[Bad]:
    """An integer parameter in ``[minimum, maximum]`` (``k``, ``n_features``, ...)."""
    out = [
        Bad(minimum - 1, (name, *also), "below minimum"),
        Bad(-1, (name, *also), "negative"),
        Bad(1.5, (name,), "float"),
        Bad(2.0, (name,), "whole float"),
        Bad("2", (name,), "str"),
        Bad(True, (name,), "bool"),
        Bad(np.array([2]), (name,), "array"),
    ]
    if maximum is not None:
        out.append(Bad(maximum + 1, (name, *also), "above maximum"))
    # Huge values may be valid (a limit), but must not overflow on their way to Rust.
    for power in (31, 32, 63, 64, 100):
        out.append(Bad(2**power, (name, *also), f"2**{power}", lenient=maximum is None))
    if not optional:
        out.append(Bad(None, (name,), "None"))
    return out


def bad_choice(name, choices) -> list[Bad]:
    return [
        Bad("no such option", (name,), "unknown"),
        Bad("", (name,), "empty"),
        Bad(None, (name,), "None"),
        Bad(1, (name,), "int"),
        Bad(choices[0].upper(), (name,), "upper case"),
    ]


def bad_bool(name) -> list[Bad]:
    return [
        Bad("yes", (name,), "str"),
        Bad(None, (name,), "None", lenient=True),
        Bad(2, (name,), "int", lenient=True),
    ]


def bad_random_state() -> list[Bad]:
    name = ("random_state",)
    return [
        Bad(-1, name, "negative"),
        Bad(1.5, name, "float"),
        Bad("0", name, "str"),
        Bad(True, name, "bool"),
        Bad([1, 2], name, "list"),
    ]


def bad_accountant(epsilon: float) -> list[Bad]:
    return [
        Bad(
            Build("BudgetAccountant", (epsilon / 4,)), ("epsilon",), "budget", errors=()
        ),
        Bad("acc", ("accountant",), "str"),
        Bad(1.0, ("accountant",), "float"),
    ]


def bad_threads() -> list[Bad]:
    return [
        Bad(0, ("n_threads",), "zero"),
        Bad(-2, ("n_threads",), "negative"),
        Bad(1.5, ("n_threads",), "float"),
        Bad("2", ("n_threads",), "str"),
    ]


def bad_matrix(name, X, *, rows_with=(), integer=False) -> list[Bad]:
    """A 2-D matrix: shapes, dtypes, NaN and infinities, empty input."""
    X = np.asarray(X)
    n, d = X.shape
    with_nan = X.astype(np.float64)
    with_nan[n // 2, d - 1] = NAN
    with_inf = X.astype(np.float64)
    with_inf[0, 0] = INF
    objects = X.astype(object)
    objects[0, 0] = None
    out = [
        Bad(with_nan, (name,), "nan"),
        Bad(with_inf, (name,), "inf"),
        Bad(-with_inf, (name,), "-inf"),
        Bad(X.astype(str), (name,), "strings"),
        Bad(objects, (name,), "None in objects"),
        Bad(X.astype(np.complex128), (name,), "complex"),
        Bad(X[:, 0], (name,), "1-D"),
        Bad(X[None], (name,), "3-D"),
        Bad(X[:0], (name,), "0 rows"),
        Bad(X[:, :0], (name,), "0 columns"),
        Bad([list(X[0]), list(X[1][:-1]) or [1, 2]], (name,), "ragged"),
        Bad(3, (name,), "scalar"),
        Bad(None, (name,), "None"),
        Bad({"a": 1}, (name,), "dict"),
    ]
    if integer:
        out.append(Bad(X + 0.5, (name,), "fractions"))
    if rows_with:
        out.append(Bad(X[:-1], (name, *rows_with), "one row fewer"))
        out.append(Bad(np.vstack([X, X[:1]]), (name, *rows_with), "one row more"))
    return out


def bad_codes(name, X, cards=None, *, cards_name="cardinalities", rows_with=()):
    """A categorical code matrix: :func:`bad_matrix` plus negative and large codes."""
    X = np.asarray(X)
    out = bad_matrix(name, X, rows_with=rows_with, integer=True)
    negative = X.copy()
    negative[-1, 0] = -1
    huge = X.copy()
    huge[0, -1] = 2**40
    out += [
        Bad(negative, (name,), "negative code"),
        Bad(huge, (name, cards_name), "code 2**40", lenient=cards is None),
        Bad(X.astype(np.uint64) + np.uint64(2**63), (name, cards_name), "uint64 codes"),
    ]
    if cards is not None:
        over = X.copy()
        over[1, 0] = cards[0]
        out.append(Bad(over, (name, cards_name), "code = cardinality"))
        out.append(Bad(np.hstack([X, X[:, :1]]), (name, cards_name), "extra column"))
    return out


def bad_cardinalities(name, cards, X=None, *, also=()) -> list[Bad]:
    """Cardinalities: wrong length, zero, negative, float, NaN, too small, huge.

    ``also``: other arguments a refusal of a huge domain may name (``max_cells``).
    """
    cards = list(cards)
    d = len(cards)
    out = [
        Bad([*cards, 2], (name,), "one too many"),
        Bad([0] * d, (name,), "zero"),
        Bad([-1] * d, (name,), "negative"),
        Bad([c + 0.5 for c in cards], (name,), "fractions"),
        Bad([NAN] * d, (name,), "nan"),
        Bad(["2"] * d, (name,), "strings"),
        Bad([2**32] * d, (name,), "2**32"),
        Bad([2**70] * d, (name,), "2**70"),
        Bad(np.array(cards)[None], (name,), "2-D"),
        Bad(5, (name,), "scalar"),
    ]
    if X is not None:
        out.append(Bad([1] * d, (name, "X", "codes"), "too small for the codes"))
    # Huge but valid domains: an answer is fine, an allocation over the domain is not.
    out.append(Bad([2**32 - 1] * d, (name, *also), "2**32 - 1 each", lenient=True))
    out.append(Bad([2**31] * (d + 2), (name,), "2**31 each, too many", lenient=False))
    return out


def bad_key_cardinalities(cards, *, huge: bool = False) -> list[Bad]:
    """The cardinalities mixed-radix keys are decoded over: :func:`bad_cardinalities`
    without the longer and (unless ``huge``) the huge domains, which the keys still
    fit, plus one too small for the keys."""
    dropped = ["one too many"]
    if not huge:
        dropped += ["2**32 - 1 each", "2**31 each, too many"]
    return [
        *drop(bad_cardinalities("cardinalities", cards), *dropped),
        Bad([1] * len(cards), ("keys", "cardinalities"), "too small for the keys"),
    ]


def negative_first(x) -> np.ndarray:
    """``x`` as int64 with its first entry -1."""
    out = np.asarray(x).astype(np.int64)
    out[0] = -1
    return out


def bad_vector(name, x, *, rows_with=(), integer=False) -> list[Bad]:
    """A 1-D vector (codes, values, labels)."""
    x = np.asarray(x)
    with_nan = x.astype(np.float64)
    with_nan[-1] = NAN
    with_inf = x.astype(np.float64)
    with_inf[0] = INF
    objects = x.astype(object)
    objects[0] = None
    out = [
        Bad(with_nan, (name,), "nan"),
        Bad(with_inf, (name,), "inf"),
        Bad(x.astype(np.complex128), (name,), "complex"),
        Bad(objects, (name,), "None in objects"),
        Bad(x[:, None].repeat(2, axis=1), (name,), "2-D"),
        Bad(x[:0], (name, *rows_with), "empty"),
        Bad(None, (name,), "None"),
        Bad(3.5, (name,), "scalar"),
    ]
    if integer:
        out.append(Bad(x + 0.5, (name,), "fractions"))
        negative = x.astype(np.int64)
        negative[0] = -1
        out.append(Bad(negative, (name,), "negative code"))
        out.append(Bad(x.astype(str), (name,), "strings"))
    if rows_with:
        out.append(Bad(x[:-1], (name, *rows_with), "one fewer"))
    return out


def bad_labels(name, y, *, binary=True, rows_with=("X",)) -> list[Bad]:
    """Class labels: lengths, NaN, None, shapes, fractions, too few or many classes."""
    y = np.asarray(y)
    with_nan = y.astype(np.float64)
    with_nan[-1] = NAN
    objects = y.astype(object)
    objects[-1] = None
    out = [
        Bad(y[:-1], (name, *rows_with), "one fewer"),
        Bad(np.append(y, y[:1]), (name, *rows_with), "one more"),
        Bad(with_nan, (name,), "nan"),
        Bad(objects, (name,), "None"),
        Bad(y[:, None].repeat(2, axis=1), (name,), "2-D"),
        Bad(y + 0.5, (name,), "fractions"),
        Bad(np.zeros_like(y), (name,), "one class"),
        Bad(y.astype(np.complex128), (name,), "complex"),
        Bad(None, (name,), "None"),
        Bad(np.array([{"a": 1}] * len(y), dtype=object), (name,), "dicts"),
    ]
    if binary:
        three = y.copy()
        three[-1] = 2  # rows 0 and 1 keep the two classes
        out.append(Bad(three, (name,), "three classes"))
    return out


# Targets ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """A public name of privtab: valid arguments, the call, its malformed arguments.

    ``layouts`` maps an array argument to the wraps (see :class:`_fuzz.Wrap`) after
    which the call must give the same answer; ``lenient_layouts`` may instead raise a
    clear error naming the argument (a pandas categorical, for instance).
    """

    name: str
    data: st.SearchStrategy[dict[str, Any]]
    program: Callable[[dict[str, Any]], Program]
    bad: Callable[[dict[str, Any]], dict[str, list[Bad]]]
    layouts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    lenient_layouts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)


MATRIX = ("fortran", "bigendian", "readonly", "strided", "list", "pandas", "polars")
VECTOR = ("bigendian", "readonly", "strided", "list", "pandas", "polars")
FLOATS = ("fortran", "bigendian", "readonly", "strided", "list", "pandas", "polars")


def call(name: str, *args: Any, **kwargs: Any) -> Program:
    return (Step(name, None, args, kwargs),)


def fit(
    cls: str,
    params: dict[str, Any],
    *args: Any,
    then: tuple[str, tuple] | None = None,
    method: str = "fit",
    **kwargs: Any,
) -> Program:
    """``cls(**params).fit(*args, **kwargs)``, then optionally a method of the result."""
    steps = [Step(cls, None, (), params), Step(Ref(0), method, args, kwargs)]
    if then is not None:
        steps.append(Step(Ref(1), then[0], then[1]))
    return tuple(steps)


def with_params(strategy, **params) -> st.SearchStrategy[dict[str, Any]]:
    """Valid data joined with fixed or drawn parameters."""

    @st.composite
    def draw_all(draw):
        args = dict(draw(strategy))
        for key, value in params.items():
            args[key] = draw(value) if isinstance(value, st.SearchStrategy) else value
        return args

    return draw_all()


TARGETS: list[Target] = []


def target(name, data, program, bad, layouts=None, lenient_layouts=None, names=None):
    """Register a :class:`Target`; ``names`` maps a data key to the parameter's name."""
    TARGETS.append(
        Target(
            name, data, program, bad, layouts or {}, lenient_layouts or {}, names or {}
        )
    )


EPS = st.sampled_from([0.5, 1.0, 3.0])


def rs(a: dict[str, Any]) -> Any:
    return a.get("random_state", SEED)


def acc(a: dict[str, Any]) -> Any:
    return a.get("accountant")


def private(a: dict[str, Any], epsilon: str = "epsilon") -> dict[str, list[Bad]]:
    """The malformed ``epsilon``, ``random_state`` and ``accountant`` of a release.

    Extreme but valid budgets (the smallest subnormal, 1e300) may give an answer, which
    must then come without a numeric warning, or a clear refusal.
    """
    extreme = [
        Bad(value, (epsilon,), f"epsilon {value:g}", lenient=True)
        for value in (5e-324, 1e-300, 1e300)
    ]
    return {
        epsilon: [*bad_real(epsilon), *extreme],
        "random_state": bad_random_state(),
        "accountant": bad_accountant(a[epsilon]),
    }


# Accounting and mechanisms -----------------------------------------------------------------
def bad_values(a: dict[str, Any], *, integer: bool) -> list[Bad]:
    """The malformed ``values`` of the Laplace mechanisms (any shape, empty allowed)."""
    X = a["X"]
    out = [
        *drop(
            bad_matrix("values", X, integer=integer),
            *("1-D", "3-D", "0 rows", "0 columns", "scalar"),
        ),
        Bad(X[:0], ("values",), "empty", lenient=True),
    ]
    if integer:
        near_max = X + np.iinfo(np.int64).max - 4
        out.append(Bad(near_max, ("values",), "near int64 max", lenient=True))
        above = X.astype(np.uint64) + np.uint64(2**63)
        out.append(Bad(above, ("values",), "uint64 above int64"))
    return out


for _fn, _data, _sensitivities, _integer in (
    ("laplace_mechanism", numeric(), [0.5, 2.0], False),
    ("discrete_laplace_mechanism", categorical(), [1, 3], True),
):
    target(
        _fn,
        with_params(_data, sensitivity=st.sampled_from(_sensitivities), epsilon=EPS),
        lambda a, _fn=_fn: call(
            _fn,
            a["X"],
            a["sensitivity"],
            a["epsilon"],
            random_state=rs(a),
            accountant=acc(a),
        ),
        lambda a, _integer=_integer: {
            "X": bad_values(a, integer=_integer),
            "sensitivity": [
                *bad_real("sensitivity"),
                # A fractional sensitivity is valid for both: the scale is exact.
                Bad(0.5, ("sensitivity",), "fraction", lenient=True),
            ],
            **private(a),
        },
        layouts={"X": MATRIX if _integer else FLOATS},
    )
target(
    "exponential_mechanism",
    with_params(
        numeric(min_cols=1, max_cols=1).map(lambda a: {"scores": a["X"].ravel()}),
        sensitivity=st.sampled_from([0.5, 1.0]),
        epsilon=EPS,
        size=st.integers(1, 3),
        replace=st.booleans(),
    ),
    lambda a: call(
        "exponential_mechanism",
        a["scores"],
        a["sensitivity"],
        a["epsilon"],
        size=a["size"],
        replace=a["replace"],
        random_state=rs(a),
        accountant=acc(a),
    ),
    lambda a: {
        "scores": [
            *bad_vector("scores", a["scores"]),
            Bad(np.full(len(a["scores"]), 1e308), ("scores",), "huge", lenient=True),
        ],
        "sensitivity": bad_real("sensitivity"),
        "size": bad_int("size", maximum=None if a["replace"] else a["scores"].size),
        "replace": bad_bool("replace"),
        **private(a),
    },
    layouts={"scores": VECTOR},
)
target(
    "check_random_state",
    st.fixed_dictionaries({"random_state": st.integers(0, 2**64)}),
    lambda a: call("check_random_state", a["random_state"]),
    lambda a: {"random_state": bad_random_state()},
)
target(
    "BudgetAccountant",
    st.fixed_dictionaries(
        {
            "epsilon": st.sampled_from([1.0, 3.0]),
            "delta": st.sampled_from([0.0, 1e-6]),
            "spend": st.sampled_from([0.1, 0.5]),
        }
    ),
    lambda a: (
        Step("BudgetAccountant", None, (a["epsilon"], a["delta"])),
        Step(
            Ref(0),
            "spend",
            (a["spend"],),
            {"label": a.get("label", "x"), "delta": a.get("spend_delta", 0.0)},
        ),
        Step(Ref(0), "check", (a.get("check", 0.1),)),
    ),
    lambda a: {
        "epsilon": drop(bad_real("epsilon"), "inf", "None"),
        "delta": [
            *bad_unit("delta", closed_high=True)[:5],
            Bad("0", ("delta",), "str"),
        ],
        "spend": [
            *bad_real("epsilon"),
            Bad(a["epsilon"] * 2, ("epsilon",), "over budget"),
        ],
        "spend_delta": [
            Bad(-0.1, ("delta",), "negative"),
            Bad(NAN, ("delta",), "nan"),
            Bad("0", ("delta",), "str"),
        ],
        "check": bad_real("epsilon"),
        "label": [Bad(3, ("label",), "int", lenient=True)],
    },
)
target(
    "LedgerEntry",
    st.fixed_dictionaries({"epsilon": EPS}),
    lambda a: call(
        "LedgerEntry",
        a.get("label", "x"),
        a["epsilon"],
        guarantee=a.get("guarantee", "dp"),
    ),
    lambda a: {"guarantee": bad_choice("guarantee", ["dp", "idp"])},
)


# Counting ---------------------------------------------------------------------------------
@st.composite
def code_pair(draw):
    data = draw(categorical(max_cols=2))
    X = data["X"]
    return {"x": X[:, 0], "y": data["y"], "kx": data["cardinalities"][0], "ky": 2}


target(
    "contingency_table",
    with_params(code_pair(), sparse=st.booleans()),
    lambda a: call(
        "contingency_table",
        a["x"],
        a["y"],
        a["kx"],
        a["ky"],
        sparse=a["sparse"],
        n_threads=a.get("n_threads"),
    ),
    lambda a: {
        "x": bad_vector("x", a["x"], rows_with=("y",), integer=True),
        "y": bad_vector("y", a["y"], rows_with=("x",), integer=True),
        "kx": [
            *drop(bad_int("kx", optional=True), "below minimum"),
            Bad(int(a["x"].max()), ("x", "kx"), "kx = max code"),
            Bad(2**31, ("kx",), "2**31", lenient=True),
            Bad(2**32, ("kx",), "2**32"),
        ],
        "ky": [
            *drop(bad_int("ky", optional=True), "below minimum"),
            Bad(1, ("y", "ky"), "ky = max code"),
        ],
        "sparse": bad_bool("sparse"),
        "n_threads": bad_threads(),
    },
    layouts={"x": VECTOR, "y": VECTOR},
)
target(
    "count_columns",
    categorical(),
    lambda a: call(
        "count_columns",
        a["X"],
        a["cardinalities"],
        a.get("columns"),
        n_threads=a.get("n_threads"),
    ),
    lambda a: {
        "X": bad_codes("codes", a["X"], a["cardinalities"]),
        "cardinalities": bad_cardinalities("cardinalities", a["cardinalities"], a["X"]),
        "columns": [
            Bad([len(a["cardinalities"])], ("columns",), "out of range"),
            Bad([-1], ("columns",), "negative"),
            Bad([0.5], ("columns",), "float"),
            Bad([0, 0], ("columns",), "repeated", lenient=True),
            Bad([], ("columns",), "empty", lenient=True),
            Bad("x0", ("columns",), "str"),
        ],
        "n_threads": bad_threads(),
    },
    layouts={"X": MATRIX},
    lenient_layouts={"X": ("pandas_categorical",)},
    names={"X": "codes"},
)


@st.composite
def keys_data(draw):
    data = draw(categorical())
    cards = data["cardinalities"]
    keys = np.ravel_multi_index(data["X"].T, cards).astype(np.uint64)
    return {"keys": keys, "cardinalities": cards}


target(
    "count_keys",
    keys_data(),
    lambda a: call(
        "count_keys",
        a["keys"],
        cardinalities=a["cardinalities"],
        n_threads=a.get("n_threads"),
    ),
    lambda a: {
        "keys": [
            *drop(
                bad_vector("keys", a["keys"], integer=True), "negative code", "strings"
            ),
            Bad(negative_first(a["keys"]), ("keys",), "negative"),
            Bad(np.array([2**64, 1], dtype=object), ("keys",), "2**64"),
        ],
        "cardinalities": bad_key_cardinalities(a["cardinalities"]),
        "n_threads": bad_threads(),
    },
    layouts={"keys": VECTOR},
)
target(
    "entropy",
    st.fixed_dictionaries(
        {"counts": st.lists(st.integers(1, 50), min_size=1, max_size=10).map(np.array)}
    ),
    lambda a: call("entropy", a["counts"]),
    lambda a: {
        "counts": [
            *drop(bad_vector("counts", a["counts"]), "2-D", "empty", "scalar"),
            Bad(a["counts"][:0], ("counts",), "empty", lenient=True),
            Bad(3.5, ("counts",), "scalar", lenient=True),
            Bad(-a["counts"], ("counts",), "negative"),
            Bad(np.zeros(3), ("counts",), "all zero", lenient=True),
            Bad(np.array(["a", "b"]), ("counts",), "strings"),
            Bad(np.full(3, 1e308), ("counts",), "huge", lenient=True),
        ],
    },
    layouts={"counts": VECTOR},
)
for _name in ("mutual_information", "symmetric_uncertainty"):
    target(
        _name,
        code_pair(),
        lambda a, _name=_name: call(
            _name, a["x"], a["y"], n_threads=a.get("n_threads")
        ),
        lambda a: {
            "x": [
                *bad_vector("x", a["x"], rows_with=("y",), integer=True),
                Bad(np.full(len(a["x"]), 2**40), ("x",), "code 2**40"),
            ],
            "y": bad_vector("y", a["y"], rows_with=("x",), integer=True),
            "n_threads": bad_threads(),
        },
        layouts={"x": VECTOR, "y": VECTOR},
    )
target(
    "SparseCounts",
    keys_data().map(
        lambda a: {
            **a,
            "keys": np.unique(a["keys"]),
            "counts": np.ones(len(np.unique(a["keys"])), dtype=np.int64),
        }
    ),
    lambda a: call("SparseCounts", a["keys"], a["counts"], a["cardinalities"]),
    lambda a: {
        "keys": [
            Bad(
                a["keys"][::-1].copy() if len(a["keys"]) > 1 else np.array([1, 0]),
                ("keys",),
                "decreasing",
            ),
            Bad(negative_first(a["keys"]), ("keys",), "negative"),
            Bad(a["keys"] + 0.5, ("keys",), "fractions"),
            Bad(a["keys"].astype(float) * NAN, ("keys",), "nan"),
            Bad(a["keys"][:, None], ("keys",), "2-D"),
        ],
        "counts": [
            Bad(np.zeros_like(a["counts"]), ("counts",), "zero"),
            Bad(a["counts"][:-1], ("counts", "keys"), "one fewer"),
            Bad(a["counts"] + 0.5, ("counts",), "fractions"),
            Bad(a["counts"].astype(str), ("counts",), "strings"),
        ],
        "cardinalities": bad_key_cardinalities(a["cardinalities"]),
    },
)

# DILCA ------------------------------------------------------------------------------------------
DILCA_PARAMS = {
    "context": st.sampled_from(["mean_su", "relevance_redundancy"]),
    "sigma": st.sampled_from([0.5, 1.0]),
}
DPDILCA_PARAMS = {
    "epsilon": EPS,
    "method": st.sampled_from(
        ["max_relevance", "max_dependency", "mean_su", "baseline"]
    ),
    "context_size": st.just(1),
    "h": st.sampled_from([0.1, 0.3]),
}


def dilca_program(cls: str, keys: tuple[str, ...], then=None):
    def program(a):
        params = {k: a[k] for k in keys}
        if cls == "DPDILCA":
            params.update(random_state=rs(a), accountant=acc(a))
        return fit(
            cls,
            params,
            a["X"],
            cardinalities=a["cardinalities"],
            then=then(a) if then else None,
        )

    return program


def dilca_bad(a, keys):
    out = {
        "X": bad_codes("X", a["X"], a["cardinalities"]),
        "cardinalities": bad_cardinalities("cardinalities", a["cardinalities"], a["X"]),
    }
    if "context" in keys:
        out["context"] = bad_choice("context", ["mean_su"])
        out["sigma"] = bad_real("sigma")
    else:
        out["method"] = bad_choice("method", ["max_relevance"])
        out["context_size"] = bad_int("context_size")
        out["h"] = bad_real("h")
        out.update(private(a))
    return out


for _cls, _params in (("DILCA", DILCA_PARAMS), ("DPDILCA", DPDILCA_PARAMS)):
    _keys = tuple(_params)
    target(
        f"{_cls}.fit",
        with_params(categorical(min_rows=6, min_cols=2), **_params),
        dilca_program(_cls, _keys, then=lambda a: ("pairwise_distances", (a["X"],))),
        lambda a, _keys=_keys: dilca_bad(a, _keys),
        layouts={"X": MATRIX},
        lenient_layouts={"X": ("pandas_categorical",)},
    )


@st.composite
def dilca_query(draw):
    a = draw(with_params(categorical(min_rows=6, min_cols=2), **DILCA_PARAMS))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    a["Y"] = np.stack([rng.integers(0, c, 3) for c in a["cardinalities"]], axis=1)
    a["query"] = a["Y"].copy()
    a["j"] = draw(st.integers(0, len(a["cardinalities"]) - 1))
    return a


def _dilca_then(a):
    steps = fit(
        "DILCA",
        {k: a[k] for k in DILCA_PARAMS},
        a["X"],
        cardinalities=a["cardinalities"],
    )
    return (
        *steps,
        Step(Ref(1), "pairwise_distances", (a["query"], a["Y"])),
        Step(Ref(1), "distance_matrix", (a["j"],)),
        Step(Ref(1), "transform", (a["query"],)),
    )


target(
    "DILCA.pairwise_distances",
    dilca_query(),
    _dilca_then,
    lambda a: {
        "query": [
            *drop(bad_codes("X", a["Y"], a["cardinalities"]), "extra column"),
            Bad(
                a["Y"][:, :-1] if a["Y"].shape[1] > 1 else np.hstack([a["Y"], a["Y"]]),
                ("X",),
                "wrong columns",
            ),
        ],
        "Y": [
            *drop(bad_codes("Y", a["Y"], a["cardinalities"]), "extra column", "None"),
            Bad(np.hstack([a["Y"], a["Y"]]), ("Y", "X"), "wrong columns"),
        ],
        "j": drop(
            bad_int("j", minimum=0, maximum=len(a["cardinalities"]) - 1),
            "None",
            "2**64",
        ),
    },
    layouts={"Y": MATRIX},
)

# Discernibility and PrivateKD ------------------------------------------------------------------
for _fn, _extra, _bad_extra in (
    (
        "discernibility",
        {"features": st.just([0])},
        lambda a: {
            "features": [
                Bad([a["X"].shape[1]], ("features",), "out of range"),
                Bad([-1], ("features",), "negative"),
                Bad([0.5], ("features",), "float"),
                Bad("x0", ("features",), "str"),
                Bad(None, ("features",), "None"),
                Bad([[0]], ("features",), "2-D"),
                Bad([0, 0], ("features",), "repeated", lenient=True),
            ],
        },
    ),
    (
        "greedy_discernibility",
        {"n_features": st.just(1)},
        lambda a: {"n_features": bad_int("n_features", maximum=a["X"].shape[1])},
    ),
    (
        "minimum_discerning_attributes",
        {"sigma": st.sampled_from([0.0, 0.1, 0.5])},
        lambda a: {
            "sigma": [
                *drop(bad_unit("sigma"), "one"),
                Bad(-0.1, ("sigma",), "negative"),
            ]
        },
    ),
):
    _argument = next(iter(_extra))
    target(
        _fn,
        with_params(categorical(), **_extra),
        lambda a, _fn=_fn, _argument=_argument: call(
            _fn,
            a["X"],
            a["y"],
            a[_argument],
            cardinalities=a["cardinalities"],
            n_threads=a.get("n_threads"),
        ),
        lambda a, _bad_extra=_bad_extra: {
            "X": bad_codes("X", a["X"], a["cardinalities"], rows_with=("y",)),
            "y": drop(
                bad_labels("y", a["y"]),
                "one class",
                "three classes",
                "fractions",
                "dicts",
            ),
            "cardinalities": bad_cardinalities(
                "cardinalities", a["cardinalities"], a["X"]
            ),
            "n_threads": bad_threads(),
            **_bad_extra(a),
        },
        layouts={"X": MATRIX, "y": VECTOR},
        lenient_layouts={"X": ("pandas_categorical",), "y": ("pandas_categorical",)},
    )
target(
    "PrivateKD.fit",
    with_params(categorical(), n_features=st.just(1), epsilon=EPS),
    lambda a: fit(
        "PrivateKD",
        {
            "n_features": a["n_features"],
            "epsilon": a["epsilon"],
            "random_state": rs(a),
            "accountant": acc(a),
            "classes": a.get("classes", [0, 1]),
            "n_threads": a.get("n_threads"),
        },
        a["X"],
        a["y"],
        cardinalities=a["cardinalities"],
        then=("transform", (a["X"],)),
    ),
    lambda a: {
        "X": bad_codes("X", a["X"], a["cardinalities"], rows_with=("y",)),
        "y": [
            *drop(bad_labels("y", a["y"]), "one class", "three classes"),
            Bad(a["y"] + 2, ("y",), "outside classes"),
        ],
        "cardinalities": bad_cardinalities("cardinalities", a["cardinalities"], a["X"]),
        "n_features": bad_int("n_features", maximum=a["X"].shape[1]),
        "classes": [
            Bad([0], ("classes",), "one class"),
            Bad([0, 0], ("classes",), "repeated"),
            Bad(3, ("classes",), "scalar"),
            Bad([NAN, 1], ("classes",), "nan"),
            Bad([], ("classes",), "empty"),
        ],
        "n_threads": bad_threads(),
        **private(a),
    },
    layouts={"X": MATRIX, "y": VECTOR},
    lenient_layouts={"X": ("pandas_categorical",)},
)

# Histograms --------------------------------------------------------------------------------------
HIST_PARAMS = {
    "epsilon": EPS,
    "noise": st.sampled_from(["laplace", "discrete"]),
    "A": st.sampled_from([0.5, 1.0]),
}
target(
    "thresholded_histogram",
    with_params(categorical(), **HIST_PARAMS),
    lambda a: call(
        "thresholded_histogram",
        a["X"],
        a["cardinalities"],
        a["epsilon"],
        threshold=a.get("threshold"),
        A=a["A"],
        noise=a["noise"],
        max_cells=a.get("max_cells", 10_000_000),
        random_state=rs(a),
        accountant=acc(a),
    ),
    lambda a: {
        "X": bad_codes("codes", a["X"], a["cardinalities"]),
        "cardinalities": bad_cardinalities(
            "cardinalities", a["cardinalities"], a["X"], also=("max_cells",)
        ),
        "threshold": drop(
            bad_real("threshold", optional=True, zero_ok=True, negative_ok=True), "-inf"
        ),
        "A": drop(bad_real("A", zero_ok=True, negative_ok=True), "None"),
        "noise": bad_choice("noise", ["laplace"]),
        "max_cells": [
            *bad_int("max_cells"),
            Bad(1, ("max_cells",), "one cell", lenient=True),
        ],
        **private(a),
    },
    layouts={"X": MATRIX},
    lenient_layouts={"X": ("pandas_categorical",)},
    names={"X": "codes"},
)
target(
    "SparseHistogram.to_records",
    with_params(categorical(), **HIST_PARAMS),
    lambda a: (
        Step(
            "thresholded_histogram",
            None,
            (a["X"], a["cardinalities"], a["epsilon"]),
            {"threshold": -5.0, "random_state": SEED},
        ),
        Step(Ref(0), "to_records", (), {"max_records": a.get("max_records")}),
        Step(Ref(0), "to_codes"),
    ),
    lambda a: {
        "max_records": [
            Bad(-1, ("max_records",), "negative"),
            Bad(1.5, ("max_records",), "float"),
            Bad("9", ("max_records",), "str"),
            Bad(0, ("max_records",), "zero", lenient=True, errors=("MemoryError",)),
        ],
    },
)
target(
    "SparseHistogram",
    keys_data().map(
        lambda a: {
            **a,
            "keys": np.unique(a["keys"]),
            "values": np.full(len(np.unique(a["keys"])), 3.0),
        }
    ),
    lambda a: (
        Step(
            "SparseHistogram",
            None,
            (a["keys"], a["values"], a["cardinalities"]),
            {
                "threshold": a.get("threshold", 1.0),
                "epsilon": a.get("epsilon", 1.0),
                "noise": a.get("noise", "laplace"),
                "n_rows": a.get("n_rows", 10),
            },
        ),
        Step(Ref(0), "to_records"),
    ),
    lambda a: {
        "keys": [
            Bad(negative_first(a["keys"]), ("keys",), "negative"),
            Bad(a["keys"] + 0.5, ("keys",), "fractions"),
            Bad(a["keys"][:, None], ("keys",), "2-D"),
            Bad(
                a["keys"][::-1].copy()
                if len(a["keys"]) > 1
                else np.array([1, 0], dtype=np.uint64),
                ("keys",),
                "decreasing",
            ),
            Bad(
                a["keys"] + np.uint64(2**60),
                ("keys", "cardinalities"),
                "outside the domain",
            ),
        ],
        "values": [
            Bad(a["values"] * NAN, ("values",), "nan"),
            Bad(a["values"][:-1], ("values", "keys"), "one fewer"),
            Bad(a["values"] - 10.0, ("values", "threshold"), "below threshold"),
            Bad(a["values"] * INF, ("values",), "inf"),
        ],
        "cardinalities": drop(
            bad_cardinalities("cardinalities", a["cardinalities"]),
            "2**32 - 1 each",
            "2**31 each, too many",
            "one too many",
        ),
        "threshold": [Bad(NAN, ("threshold",), "nan"), Bad("1", ("threshold",), "str")],
        "epsilon": drop(bad_real("epsilon"), "list"),
        "noise": bad_choice("noise", ["laplace"]),
        "n_rows": bad_int("n_rows", minimum=0),
    },
)
PH_PARAMS = {
    "epsilon": EPS,
    "n_features": st.sampled_from([None, 1]),
    "noise": st.sampled_from(["laplace", "discrete"]),
}
target(
    "ProjectedHistogram.fit",
    with_params(categorical(min_rows=8), **PH_PARAMS),
    lambda a: fit(
        "ProjectedHistogram",
        {
            "epsilon": a["epsilon"],
            "n_features": a["n_features"],
            "gamma": a.get("gamma"),
            "A": a.get("A", 0.5),
            "B": a.get("B", 0.5),
            "sigma": a.get("sigma", 0.1),
            "noise": a["noise"],
            "max_cells": a.get("max_cells", 10_000_000),
            "random_state": rs(a),
            "accountant": acc(a),
            "classes": a.get("classes", [0, 1]),
        },
        a["X"],
        a["y"],
        cardinalities=a["cardinalities"],
        then=("synthetic", ()),
    ),
    lambda a: {
        "X": bad_codes("X", a["X"], a["cardinalities"], rows_with=("y",)),
        "y": [
            *drop(bad_labels("y", a["y"]), "one class", "three classes"),
            Bad(a["y"] + 2, ("y",), "outside classes"),
        ],
        "cardinalities": bad_cardinalities(
            "cardinalities", a["cardinalities"], a["X"], also=("max_cells",)
        ),
        "n_features": bad_int("n_features", maximum=a["X"].shape[1], optional=True),
        "gamma": drop(bad_unit("gamma", closed_high=True), "None"),
        "A": bad_real("A"),
        "B": bad_real("B"),
        "sigma": bad_unit("sigma"),
        "noise": bad_choice("noise", ["laplace"]),
        "max_cells": [
            *bad_int("max_cells"),
            Bad(1, ("max_cells",), "one cell", lenient=True),
        ],
        "classes": [
            Bad([0], ("classes",), "one class"),
            Bad([0, 0], ("classes",), "repeated"),
            Bad(3, ("classes",), "scalar"),
        ],
        **private(a),
    },
    layouts={"X": MATRIX, "y": VECTOR},
    lenient_layouts={"X": ("pandas_categorical",)},
)

# Encoding ------------------------------------------------------------------------------------------
target(
    "mixed_radix_encode",
    categorical(),
    lambda a: call(
        "mixed_radix_encode", a["X"], a["cardinalities"], n_threads=a.get("n_threads")
    ),
    lambda a: {
        "X": bad_codes("codes", a["X"], a["cardinalities"]),
        "cardinalities": bad_cardinalities("cardinalities", a["cardinalities"], a["X"]),
        "n_threads": bad_threads(),
    },
    layouts={"X": MATRIX},
    lenient_layouts={"X": ("pandas_categorical",)},
    names={"X": "codes"},
)
target(
    "mixed_radix_decode",
    keys_data(),
    lambda a: call(
        "mixed_radix_decode",
        a["keys"],
        a["cardinalities"],
        n_threads=a.get("n_threads"),
    ),
    lambda a: {
        "keys": [
            *drop(
                bad_vector("keys", a["keys"], integer=True), "negative code", "strings"
            ),
            Bad(negative_first(a["keys"]), ("keys",), "negative"),
            Bad(np.array(["1"]), ("keys",), "strings"),
        ],
        "cardinalities": bad_key_cardinalities(a["cardinalities"], huge=True),
        "n_threads": bad_threads(),
    },
    layouts={"keys": VECTOR},
)
target(
    "EncodedTable",
    categorical(),
    lambda a: (
        Step(
            "EncodedTable",
            None,
            (a["X"], a["cardinalities"]),
            {"columns": a.get("columns"), "categories": a.get("categories")},
        ),
        Step(Ref(0), "select", (a.get("select", ["x0"]),)),
    ),
    lambda a: {
        "X": bad_codes("codes", a["X"], a["cardinalities"]),
        "cardinalities": bad_cardinalities("cardinalities", a["cardinalities"], a["X"]),
        "columns": [
            Bad(["a"] * (len(a["cardinalities"]) + 1), ("columns",), "too many"),
            Bad(
                ["a", "a"] + ["b"] * (len(a["cardinalities"]) - 2)
                if len(a["cardinalities"]) > 1
                else [],
                ("columns",),
                "repeated",
            ),
            Bad(3, ("columns",), "scalar"),
        ],
        "categories": [
            Bad([[0]] * len(a["cardinalities"]), ("categories",), "too short"),
            Bad([], ("categories",), "empty"),
            Bad(5, ("categories",), "scalar"),
        ],
        "select": [
            Bad(["nope"], ("columns", "nope"), "unknown", errors=("KeyError",)),
            Bad("x0", ("columns",), "str", lenient=True),
            Bad([1.5], ("columns", "1.5"), "float", errors=("KeyError",)),
        ],
    },
    layouts={"X": MATRIX},
    names={"X": "codes"},
)


@st.composite
def mixed_frame(draw):
    """A table of one categorical and one numeric column, as a numpy object array."""
    n = draw(st.integers(4, 14))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    colors = rng.choice(["red", "green", "blue"], n).astype(object)
    sizes = np.round(rng.uniform(0, 10, n), 2)
    return {
        "X": np.column_stack([colors, sizes.astype(object)]),
        "domains": {0: ["blue", "green", "red"]},
        "bounds": {1: (0.0, 10.0)},
        "bins": draw(st.sampled_from([None, 2, 5])),
    }


target(
    "TableEncoder",
    mixed_frame(),
    lambda a: (
        Step(
            "TableEncoder",
            None,
            (),
            {
                "domains": a["domains"],
                "bins": a["bins"],
                "bounds": a["bounds"],
                "missing": a.get("missing", "raise"),
                "out_of_bounds": a.get("out_of_bounds", "raise"),
            },
        ),
        Step(Ref(0), "fit_transform", (a["X"],)),
        Step(Ref(0), "inverse_transform", (a.get("codes", Ref(1)),)),
    ),
    lambda a: {
        "X": [
            Bad(
                np.column_stack([a["X"][:, 0], np.full(len(a["X"]), 99.0)]),
                ("1", "x1", "bounds", "X"),
                "out of bounds",
                errors=("DomainError",),
            ),
            Bad(
                np.column_stack(
                    [np.full(len(a["X"]), "pink", dtype=object), a["X"][:, 1]]
                ),
                ("0", "x0", "pink", "X"),
                "unknown category",
            ),
            Bad(
                np.column_stack([a["X"][:, 0], np.full(len(a["X"]), NAN)]),
                ("1", "x1", "X", "missing"),
                "nan",
            ),
            Bad(a["X"][:0], ("X",), "0 rows"),
            Bad(a["X"][:, 0], ("X",), "1-D"),
            Bad(None, ("X",), "None"),
        ],
        "domains": [
            Bad(
                {0: ["red"]},
                ("0", "x0", "domains", "blue", "green"),
                "missing category",
            ),
            Bad({5: ["a"]}, ("5", "domains"), "unknown column"),
            Bad({0: []}, ("domains", "0", "x0"), "empty"),
            Bad(
                {0: ["red", "red", "blue", "green"]},
                ("domains", "0", "x0", "red"),
                "repeated",
            ),
            Bad(["red"], ("domains",), "list"),
        ],
        "bounds": [
            Bad({1: (10.0, 0.0)}, ("bounds", "1", "x1"), "reversed"),
            Bad({1: (0.0, NAN)}, ("bounds", "1", "x1"), "nan"),
            Bad({1: (0.0,)}, ("bounds", "1", "x1"), "one end"),
            Bad({1: "ab"}, ("bounds", "1", "x1"), "str"),
            Bad({7: (0, 1)}, ("bounds", "7"), "unknown column"),
        ],
        "bins": [
            Bad(0, ("bins",), "zero"),
            Bad(-3, ("bins",), "negative"),
            Bad(2.5, ("bins",), "float"),
            Bad({1: 0}, ("bins", "1", "x1"), "zero in dict"),
            Bad("4", ("bins",), "str"),
            Bad(2**40, ("bins",), "2**40"),
        ],
        "missing": bad_choice("missing", ["raise"]),
        "out_of_bounds": bad_choice("out_of_bounds", ["raise"]),
        "codes": [
            Bad(np.array([[5, 0]]), ("codes",), "code above cardinality"),
            Bad(np.array([[0.5, 0]]), ("codes",), "fractions"),
            Bad(np.array([[0, 0, 0]]), ("codes",), "extra column"),
            Bad(np.array([[-1, 0]]), ("codes",), "negative"),
            Bad(np.array([0, 0]), ("codes",), "1-D"),
        ],
    },
    layouts={"X": ("readonly", "strided")},
)
for _fn in ("lei_bandwidth", "lei_bins"):
    target(
        _fn,
        st.fixed_dictionaries({"n": st.integers(2, 10**6), "d": st.integers(1, 30)}),
        lambda a, _fn=_fn: call(_fn, a["n"], a["d"]),
        lambda a: {
            "n": [
                *bad_int("n"),
                Bad(1, ("n",), "one", lenient=True),
                Bad(10**30, ("n",), "10**30", lenient=True),
            ],
            "d": [
                *bad_int("d", minimum=0),
                Bad(10**30, ("d",), "10**30", lenient=True),
            ],
        },
    )


# DPFSDR (Zhang et al.'s feature selection with dynamic relevance) ------------------------------
target(
    "pearson_matrix",
    numeric(),
    lambda a: call("pearson_matrix", a["X"]),
    lambda a: {
        "X": [
            *bad_matrix("X", a["X"]),
            Bad(np.ones_like(a["X"]), ("X",), "constant columns", lenient=True),
            Bad(a["X"] * 1e300, ("X",), "huge values", lenient=True),
        ]
    },
    layouts={"X": FLOATS},
)
for _fn in ("filter_correlated_features", "correlated_degree_matrix"):
    target(
        _fn,
        with_params(numeric(), delta=st.sampled_from([0.5, 0.9, 1.0])),
        lambda a, _fn=_fn: call(_fn, a["X"], a["delta"]),
        lambda a: {
            "X": [
                *bad_matrix("X", a["X"]),
                Bad(np.ones_like(a["X"]), ("X",), "constant columns", lenient=True),
            ],
            "delta": bad_unit("delta", closed_high=True),
        },
        layouts={"X": FLOATS},
    )
target(
    "correlated_sensitivity",
    with_params(numeric(), record_delta=st.sampled_from([0.5, 0.8, 1.0])),
    lambda a: call(
        "correlated_sensitivity", a["X"], a.get("features"), a["record_delta"]
    ),
    lambda a: {
        "X": [
            *bad_matrix("X", a["X"]),
            Bad(np.zeros_like(a["X"]), ("X",), "zero rows", lenient=True),
        ],
        "features": [
            Bad([a["X"].shape[1]], ("features",), "out of range"),
            Bad([-1], ("features",), "negative"),
            Bad([0.5], ("features",), "float"),
            Bad("x0", ("features",), "str"),
            Bad([0, 0], ("features",), "repeated"),
            Bad([], ("features",), "empty", lenient=True),
        ],
        "record_delta": bad_unit("record_delta", closed_high=True),
    },
    layouts={"X": FLOATS},
)
target(
    "fscore",
    numeric(),
    lambda a: call("fscore", a["X"], a["y"]),
    lambda a: {
        "X": [
            *bad_matrix("X", a["X"], rows_with=("y",)),
            Bad(np.ones_like(a["X"]), ("X",), "constant columns", lenient=True),
        ],
        "y": [
            *drop(bad_labels("y", a["y"]), "three classes", "one class"),
            Bad(np.zeros_like(a["y"]), ("y",), "one class", lenient=True),
        ],
    },
    layouts={"X": FLOATS, "y": VECTOR},
)
target(
    "dp_feature_importance",
    with_params(numeric(), epsilon=EPS, normalize=st.booleans()),
    lambda a: call(
        "dp_feature_importance",
        a["X"],
        a["y"],
        a["epsilon"],
        sensitivity=a.get("sensitivity", 2.0),
        normalize=a["normalize"],
        random_state=rs(a),
        accountant=acc(a),
        classes=a.get("classes", [0, 1]),
    ),
    lambda a: {
        "X": bad_matrix("X", a["X"], rows_with=("y",)),
        "y": [
            *drop(bad_labels("y", a["y"]), "one class", "three classes"),
            Bad(a["y"] + 2, ("y",), "outside classes"),
        ],
        "sensitivity": bad_real("sensitivity"),
        "normalize": bad_bool("normalize"),
        "classes": [
            Bad([0], ("classes",), "one class"),
            Bad([0, 0], ("classes",), "repeated"),
            Bad(3, ("classes",), "scalar"),
        ],
        **private(a),
    },
    layouts={"X": FLOATS, "y": VECTOR},
)


def classifier_bad(a: dict[str, Any]) -> dict[str, list[Bad]]:
    """The malformed X, y and classes of the classifiers on real-valued X."""
    return {
        "X": [
            *bad_matrix("X", a["X"], rows_with=("y",)),
            Bad(a["X"] * 100, ("X", "data_norm"), "rows above data_norm", lenient=True),
        ],
        "y": [
            *drop(bad_labels("y", a["y"]), "one class"),
            Bad(a["y"] + 2, ("y",), "outside classes"),
        ],
        "classes": [
            Bad([0], ("classes",), "one class"),
            Bad([0, 0], ("classes",), "repeated"),
            Bad(3, ("classes",), "scalar"),
            # One-vs-rest models take more classes than y holds.
            Bad([0, 1, 2], ("classes",), "three classes", lenient=True),
        ],
    }


DPFS_PARAMS = {
    "epsilon_selection": st.sampled_from([None, 1.0]),
    "epsilon_training": st.sampled_from([None, 1.0]),
    "budget": st.sampled_from(["per_refit", "total"]),
}
for _cls in ("DPFSDR", "DPFS"):
    target(
        f"{_cls}.fit",
        with_params(numeric(min_rows=10, min_cols=2), **DPFS_PARAMS),
        lambda a, _cls=_cls: fit(
            _cls,
            {
                "epsilon_selection": a["epsilon_selection"],
                "epsilon_training": a["epsilon_training"],
                "delta": a.get("delta", 0.9),
                "record_delta": a.get("record_delta", 0.8),
                "C": a.get("C", 1.0),
                "data_norm": a.get("data_norm", 6.0),
                "budget": a["budget"],
                "max_refits": a.get("max_refits"),
                "classes": a.get("classes", [0, 1]),
                "random_state": rs(a),
                "accountant": acc(a),
            },
            a["X"],
            a["y"],
            then=("transform", (a["X"],)),
        ),
        lambda a: {
            **classifier_bad(a),
            "epsilon_selection": bad_real("epsilon_selection", optional=True),
            "epsilon_training": bad_real("epsilon_training", optional=True),
            "delta": bad_unit("delta", closed_high=True),
            "record_delta": bad_unit("record_delta", closed_high=True),
            "C": bad_real("C"),
            "data_norm": bad_real("data_norm", optional=True),
            "budget": bad_choice("budget", ["total"]),
            "max_refits": bad_int("max_refits", optional=True),
            "random_state": bad_random_state(),
            "accountant": [
                Bad("acc", ("accountant",), "str"),
                Bad(
                    Build("BudgetAccountant", (0.01,)),
                    ("epsilon", "epsilon_selection", "epsilon_training"),
                    "budget",
                    # Nothing is spent without a budget, so nothing is refused.
                    lenient=a["epsilon_selection"] is None
                    and a["epsilon_training"] is None,
                ),
            ],
        },
        layouts={"X": FLOATS, "y": VECTOR},
    )

# DP linear models --------------------------------------------------------------------------------
for _cls, _methods in (
    ("DPLogisticRegression", ["objective", "output"]),
    ("DPLinearSVC", ["output", "objective"]),
):
    target(
        f"{_cls}.fit",
        with_params(
            numeric(min_rows=8),
            epsilon=EPS,
            method=st.sampled_from(_methods),
            fit_intercept=st.booleans(),
        ),
        lambda a, _cls=_cls: fit(
            _cls,
            {
                "epsilon": a["epsilon"],
                "C": a.get("C", 1.0),
                "method": a["method"],
                "data_norm": a.get("data_norm", 6.0),
                "fit_intercept": a["fit_intercept"],
                "random_state": rs(a),
                "accountant": acc(a),
                "classes": a.get("classes", [0, 1]),
                **({"huber_h": a.get("huber_h", 0.5)} if _cls == "DPLinearSVC" else {}),
            },
            a["X"],
            a["y"],
            then=("predict", (a.get("X_test", a["X"]),)),
        ),
        lambda a, _cls=_cls: {
            **classifier_bad(a),
            "C": bad_real("C"),
            "method": bad_choice("method", ["output"]),
            "data_norm": bad_real("data_norm", optional=True),
            "fit_intercept": bad_bool("fit_intercept"),
            "X_test": [
                *drop(bad_matrix("X", a["X"]), "0 columns"),
                Bad(np.hstack([a["X"], a["X"]]), ("X",), "more columns"),
            ],
            **({"huber_h": bad_real("huber_h")} if _cls == "DPLinearSVC" else {}),
            **private(a),
        },
        layouts={"X": FLOATS, "y": VECTOR},
    )
target(
    "objective_perturbation_parameters",
    st.fixed_dictionaries(
        {
            "epsilon": EPS,
            "n_samples": st.integers(1, 10**6),
            "lambda_": st.sampled_from([1e-3, 0.1]),
            "c": st.sampled_from([0.25, 1.0]),
        }
    ),
    lambda a: call(
        "objective_perturbation_parameters",
        a["epsilon"],
        a["n_samples"],
        a["lambda_"],
        a["c"],
    ),
    lambda a: {
        "epsilon": bad_real("epsilon"),
        "n_samples": bad_int("n_samples"),
        "lambda_": bad_real("lambda_"),
        "c": bad_real("c"),
    },
)
target(
    "output_perturbation_l1_sensitivity",
    st.fixed_dictionaries(
        {
            "n_samples": st.integers(1, 10**6),
            "n_weights": st.integers(1, 50),
            "C": st.sampled_from([0.5, 1.0]),
        }
    ),
    lambda a: call(
        "output_perturbation_l1_sensitivity", a["n_samples"], a["n_weights"], a["C"]
    ),
    lambda a: {
        "n_samples": bad_int("n_samples"),
        "n_weights": bad_int("n_weights"),
        "C": bad_real("C"),
    },
)
target(
    "output_perturbation_l2_sensitivity",
    st.fixed_dictionaries(
        {"n_samples": st.integers(1, 10**6), "C": st.sampled_from([0.5, 1.0])}
    ),
    lambda a: call("output_perturbation_l2_sensitivity", a["n_samples"], a["C"]),
    lambda a: {"n_samples": bad_int("n_samples"), "C": bad_real("C")},
)


# k-anonymity by containment ----------------------------------------------------------------------
def bad_binary(name, B, *, rows_with=()) -> list[Bad]:
    """A 0/1 matrix: :func:`bad_matrix` plus values other than 0 and 1."""
    B = np.asarray(B)
    out = bad_matrix(name, B, rows_with=rows_with)
    for value, what in ((2, "a 2"), (-1, "a -1"), (0.5, "a 0.5")):
        wrong = B.astype(np.float64)
        wrong[0, 0] = value
        out.append(Bad(wrong, (name,), what))
    out.append(Bad(B.astype(np.float64), (name,), "0.0/1.0 floats", lenient=True))
    out.append(Bad(B.astype(bool), (name,), "booleans", lenient=True))
    return out


BINARY = (*MATRIX, "sparse")


def kac_bad(a, *, name="B", labels=True, k=None):
    out = {"B": bad_binary(name, a["B"], rows_with=("y",) if labels else ())}
    if labels:
        out["y"] = [
            *drop(bad_labels("y", a["y"], rows_with=(name,)), "fractions", "dicts"),
            Bad(np.zeros_like(a["y"]), ("y",), "one class"),
        ]
    if k is not None:
        out[k[0]] = bad_int(k[0], maximum=k[1])
    return out


for _fn in ("classification_metric", "distcnt_utility", "ham_utility"):
    target(
        _fn,
        with_params(binary(), S=st.just([0, 1])),
        lambda a, _fn=_fn: call(_fn, a["B"], a["y"], a["S"]),
        lambda a: {
            **kac_bad(a),
            "S": [
                Bad([a["B"].shape[1]], ("S",), "out of range"),
                Bad([-1], ("S",), "negative"),
                Bad([0.5], ("S",), "float"),
                Bad("ab", ("S",), "str"),
                Bad(np.ones(a["B"].shape[1] + 1, dtype=bool), ("S",), "long mask"),
                Bad([[0]], ("S",), "2-D"),
                Bad(None, ("S",), "None"),
            ],
        },
        layouts={"B": BINARY, "y": VECTOR},
    )
target(
    "containment_anonymity",
    binary(),
    lambda a: call(
        "containment_anonymity", a["B"], a.get("features"), n_threads=a.get("n_threads")
    ),
    lambda a: {
        **kac_bad(a, labels=False),
        "features": [
            Bad([a["B"].shape[1]], ("features",), "out of range"),
            Bad([-1], ("features",), "negative"),
            Bad([0.5], ("features",), "float"),
            Bad("ab", ("features",), "str"),
        ],
        "n_threads": bad_threads(),
    },
    layouts={"B": BINARY},
)


def mining_bad(a: dict[str, Any]) -> dict[str, list[Bad]]:
    """The malformed B, limits and threads of the maximal-set searches."""
    return {
        **kac_bad(a, labels=False),
        "max_sets": bad_int("max_sets", optional=True),
        "time_limit": [
            Bad(-1.0, ("time_limit",), "negative"),
            Bad(NAN, ("time_limit",), "nan"),
            Bad("1", ("time_limit",), "str"),
            Bad(1e300, ("time_limit",), "1e300 s", lenient=True),
        ],
        "n_threads": bad_threads(),
    }


for _fn, _threshold, _values, _bad_threshold in (
    (
        "maximal_itemsets",
        "min_support",
        [1, 2, 0.5],
        lambda a: [
            Bad(0, ("min_support",), "zero"),
            Bad(-1, ("min_support",), "negative"),
            Bad(NAN, ("min_support",), "nan"),
            Bad(1.5, ("min_support",), "float above 1"),
            Bad("2", ("min_support",), "str"),
            Bad(None, ("min_support",), "None"),
            Bad(10**9, ("min_support",), "above n", lenient=True),
            Bad(True, ("min_support",), "bool"),
        ],
    ),
    (
        "maximal_kac_sets",
        "k",
        [1, 2, 3],
        lambda a: [
            *bad_int("k"),
            Bad(a["B"].shape[0] + 1, ("k",), "above n", lenient=True),
        ],
    ),
):
    target(
        _fn,
        with_params(binary(), **{_threshold: st.sampled_from(_values)}),
        lambda a, _fn=_fn, _threshold=_threshold: call(
            _fn,
            a["B"],
            a[_threshold],
            max_sets=a.get("max_sets"),
            time_limit=a.get("time_limit"),
            n_threads=a.get("n_threads"),
        ),
        lambda a, _threshold=_threshold, _bad_threshold=_bad_threshold: {
            **mining_bad(a),
            _threshold: _bad_threshold(a),
        },
        layouts={"B": BINARY},
    )
target(
    "randomization_flipping",
    with_params(binary(), k=st.sampled_from([1, 2, 3])),
    lambda a: call(
        "randomization_flipping",
        a["B"],
        a["k"],
        random_state=rs(a),
        n_threads=a.get("n_threads"),
    ),
    lambda a: {
        **kac_bad(a, labels=False, k=("k", a["B"].shape[0])),
        "random_state": bad_random_state(),
        "n_threads": bad_threads(),
    },
    layouts={"B": BINARY},
)
target(
    "read_transactions",
    st.fixed_dictionaries(
        {
            "path": st.sampled_from([b"1 2\n0\n\n3 1\n", b"0\n", b"5 6 7\n1\n"]).map(
                lambda b: Wrap("path", b)
            )
        }
    ),
    lambda a: call("read_transactions", a["path"]),
    lambda a: {
        "path": [
            Bad(Wrap("path", b"1 x\n"), ("path", "x", "line 1"), "letter"),
            Bad(Wrap("path", b"-1 2\n"), ("path", "-1", "line 1"), "negative"),
            Bad(Wrap("path", b"1.5\n"), ("path", "1.5", "line 1"), "float"),
            Bad(Wrap("path", b"\xff\xfe\n"), ("path", "line 1"), "binary bytes"),
            Bad(
                Wrap("path", b"99999999999999999999\n"),
                ("path", "99999999999999999999", "line 1"),
                "huge item",
            ),
            Bad(Wrap("path", b""), ("path",), "empty file", lenient=True),
            Bad(
                Wrap("path", b"4294967296\n"),
                ("path", "4294967296", "line 1"),
                "2**32",
                lenient=True,
            ),
            Bad(
                "/nonexistent/file.txt",
                ("path", "/nonexistent/file.txt"),
                "missing file",
                errors=("FileNotFoundError",),
            ),
            Bad(3, ("path",), "int"),
            Bad(None, ("path",), "None"),
        ],
    },
)
target(
    "Itemsets",
    st.fixed_dictionaries({"complete": st.booleans()}),
    lambda a: call(
        "Itemsets",
        a.get("sets", [np.array([0, 1])]),
        complete=a["complete"],
        supports=a.get("supports", [2]),
    ),
    lambda a: {
        "supports": [
            Bad(["a"], ("supports",), "strings"),
            Bad([1.5], ("supports",), "float"),
            Bad([1, 2], ("supports", "sets"), "one more"),
        ],
        "complete": bad_bool("complete"),
        "sets": [Bad(3, ("sets",), "int")],
    },
)
KAC_SELECTORS = (
    (
        "KACSelector",
        {
            "k": st.sampled_from([1, 2]),
            "method": st.sampled_from(
                ["greedy_distcnt", "greedy_ham", "maximal", "maximal_feasible"]
            ),
            "utility": st.sampled_from(["distcnt", "ham"]),
            "top_t": st.sampled_from([1, 10]),
        },
    ),
    (
        "KAnonymityGreedy",
        {"k": st.sampled_from([1, 2]), "utility": st.sampled_from(["ham", "distcnt"])},
    ),
    ("CMGreedy", {"k": st.sampled_from([1, 2])}),
    (
        "LaplaceDPRelease",
        {
            "epsilon": EPS,
            "n_features": st.sampled_from([1, 2]),
            "random_state": st.just(SEED),
        },
    ),
    (
        "ExponentialDPRelease",
        {
            "epsilon": EPS,
            "n_features": st.sampled_from([1, 2]),
            "random_state": st.just(SEED),
        },
    ),
)


def kac_selector_bad(a, params):
    # The estimators take the 0/1 matrix as fit(X, y), and name it X.
    out = kac_bad(a, name="X")
    m = a["B"].shape[1]
    if "k" in params:
        out["k"] = [
            *bad_int("k"),
            Bad(a["B"].shape[0] + 1, ("k",), "above n", lenient=True),
        ]
    if "method" in params:
        out["method"] = bad_choice("method", ["greedy_ham"])
        out["top_t"] = bad_int("top_t")
    if "utility" in params:
        out["utility"] = bad_choice("utility", ["ham"])
    if "epsilon" in params:
        out["n_features"] = bad_int("n_features", maximum=m)
        out["max_cells"] = [
            *bad_int("max_cells"),
            Bad(2, ("max_cells",), "too few cells"),
        ]
        out["classes"] = [
            Bad([0], ("classes",), "one class"),
            Bad([0, 1, 2], ("classes",), "three classes"),
            Bad(3, ("classes",), "scalar"),
        ]
        out.update(private(a))
    else:
        out["n_threads"] = bad_threads()
    return out


for _cls, _params in KAC_SELECTORS:
    target(
        f"{_cls}.fit",
        with_params(binary(), **_params),
        lambda a, _cls=_cls, _params=_params: fit(
            _cls,
            {
                **{key: a[key] for key in _params},
                **(
                    {
                        "max_cells": a.get("max_cells", 2**24),
                        "classes": a.get("classes", [0, 1]),
                        "random_state": rs(a),
                        "accountant": acc(a),
                    }
                    if "epsilon" in _params
                    else {"n_threads": a.get("n_threads")}
                ),
                **({"top_t": a.get("top_t", 10)} if "top_t" in _params else {}),
            },
            a["B"],
            a["y"],
            then=("transform", (a["B"],)),
        ),
        lambda a, _params=_params: kac_selector_bad(a, _params),
        layouts={"B": BINARY, "y": VECTOR},
    )


# Microaggregation ----------------------------------------------------------------------------------
@st.composite
def attribute(draw):
    n = draw(st.integers(3, 20))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return {"x": np.round(rng.uniform(0, 10, n), 2), "k": draw(st.integers(1, 3))}


def bad_bounds(hi: float) -> list[Bad]:
    """Bounds ``(0, hi)`` reversed, with a NaN, or as a string."""
    return [
        Bad((hi, 0.0), ("bounds",), "reversed"),
        Bad((0.0, NAN), ("bounds",), "nan"),
        Bad("ab", ("bounds",), "str"),
    ]


def bad_microaggregation(a: dict[str, Any], n: int) -> dict[str, list[Bad]]:
    """The malformed ``k`` (with ``n`` values) and ``mechanism`` of a microaggregation."""
    k = bad_int("k", maximum=n)
    if a["mechanism"] == "idp_cbls":
        k.append(Bad(2, ("k",), "k < 3 for idp_cbls"))
    return {"k": k, "mechanism": bad_choice("mechanism", ["dp"])}


target(
    "individual_ranking_clusters",
    attribute(),
    lambda a: call("individual_ranking_clusters", a["x"], a["k"]),
    lambda a: {
        "x": [*drop(bad_vector("x", a["x"]), "None"), Bad(None, ("x",), "None")],
        "k": bad_int("k", maximum=len(a["x"])),
    },
    layouts={"x": VECTOR},
)
target(
    "microaggregate",
    with_params(
        attribute().map(lambda a: {**a, "k": 3}),
        mechanism=st.sampled_from(["idp_cbls", "idp_ls", "dp"]),
    ),
    lambda a: call(
        "microaggregate",
        a["x"],
        a["k"],
        mechanism=a["mechanism"],
        bounds=a.get("bounds", (0.0, 10.0)),
    ),
    lambda a: {
        "x": [
            *bad_vector("x", a["x"]),
            Bad(a["x"] + 20, ("x", "bounds"), "outside bounds"),
        ],
        **bad_microaggregation(a, len(a["x"])),
        "bounds": [
            *bad_bounds(10.0),
            Bad((0.0,), ("bounds",), "one end"),
            Bad(None, ("bounds",), "None"),
            Bad((0.0, INF), ("bounds",), "inf"),
        ],
    },
    layouts={"x": VECTOR},
)
for _fn in ("sse", "mean_sse"):
    target(
        _fn,
        numeric().map(lambda a: {"X": a["X"], "X_masked": a["X"] + 0.5}),
        lambda a, _fn=_fn: call(_fn, a["X"], a["X_masked"]),
        lambda a: {
            "X": [
                *drop(bad_matrix("X", a["X"]), "1-D"),
                Bad(a["X"][:-1], ("X", "X_masked"), "one row fewer"),
            ],
            "X_masked": [
                *drop(bad_matrix("X_masked", a["X_masked"]), "1-D"),
                Bad(
                    a["X_masked"][:, :-1] if a["X"].shape[1] > 1 else a["X_masked"][:0],
                    ("X", "X_masked"),
                    "fewer columns",
                ),
            ],
        },
        layouts={"X": FLOATS, "X_masked": FLOATS},
    )
target(
    "MicroaggregationMasker.fit_transform",
    with_params(
        numeric(min_rows=6).map(lambda a: {"X": np.abs(a["X"])}),
        k=st.sampled_from([3, 4]),
        epsilon=EPS,
        mechanism=st.sampled_from(["idp_cbls", "idp_ls", "dp"]),
    ),
    lambda a: fit(
        "MicroaggregationMasker",
        {
            "k": a["k"],
            "epsilon": a["epsilon"],
            "mechanism": a["mechanism"],
            "bounds": a.get("bounds", (0.0, 3.0)),
            "epsilon_split": a.get("epsilon_split"),
            "non_numeric": a.get("non_numeric", "raise"),
            "keep_index": a.get("keep_index", False),
            "keep_attrs": a.get("keep_attrs", False),
            "out_of_bounds": a.get("out_of_bounds", "raise"),
            "random_state": rs(a),
            "accountant": acc(a),
            "n_threads": a.get("n_threads"),
        },
        a["X"],
        method="fit_transform",
    ),
    lambda a: {
        "X": [
            *drop(bad_matrix("X", a["X"]), "strings", "None in objects"),
            Bad(a["X"] + 10, ("X", "bounds", "out_of_bounds"), "outside bounds"),
        ],
        **bad_microaggregation(a, a["X"].shape[0]),
        "bounds": [
            *bad_bounds(3.0),
            Bad([(0.0, 3.0)] * (a["X"].shape[1] + 1), ("bounds",), "too many pairs"),
            Bad({"nope": (0, 1)}, ("bounds", "nope"), "unknown column"),
            Bad(5, ("bounds",), "scalar"),
        ],
        "epsilon_split": [
            Bad([1.0] * (a["X"].shape[1] + 1), ("epsilon_split",), "too many"),
            Bad([-1.0] * a["X"].shape[1], ("epsilon_split",), "negative"),
            Bad([NAN] * a["X"].shape[1], ("epsilon_split",), "nan"),
            Bad("even", ("epsilon_split",), "str"),
            Bad([0.0] * a["X"].shape[1], ("epsilon_split",), "zeros"),
        ],
        "non_numeric": bad_choice("non_numeric", ["passthrough"]),
        "keep_index": bad_bool("keep_index"),
        "keep_attrs": bad_bool("keep_attrs"),
        "out_of_bounds": bad_choice("out_of_bounds", ["raise"]),
        "n_threads": bad_threads(),
        **private(a),
    },
    layouts={"X": FLOATS},
)

# Datasets -------------------------------------------------------------------------------------------
target(
    "datasets.load_adult",
    st.fixed_dictionaries({"as_frame": st.booleans(), "return_X_y": st.booleans()}),
    lambda a: call(
        "privtab.datasets:load_adult",
        as_frame=a["as_frame"],
        return_X_y=a["return_X_y"],
    ),
    lambda a: {
        "as_frame": [
            Bad("yes", ("as_frame",), "str"),
            Bad(None, ("as_frame",), "None"),
        ],
        "return_X_y": [
            Bad("yes", ("return_X_y",), "str"),
            Bad(1, ("return_X_y",), "int"),
        ],
    },
)


# The properties ---------------------------------------------------------------------------
def _strip_wraps(value: Any) -> Any:
    """The same request with every :class:`Wrap` replaced by the plain array."""
    if isinstance(value, Wrap):
        return _strip_wraps(value.value)
    if isinstance(value, Step):
        return Step(
            value.target,
            value.method,
            _strip_wraps(value.args),
            _strip_wraps(value.kwargs),
        )
    if isinstance(value, tuple):
        return tuple(_strip_wraps(v) for v in value)
    if isinstance(value, list):
        return [_strip_wraps(v) for v in value]
    if isinstance(value, dict):
        return {k: _strip_wraps(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def worker():
    pool = FuzzWorker()
    yield pool
    pool.close()


@pytest.fixture(scope="module", autouse=True)
def _write_counts():
    yield
    path = os.environ.get("PRIVTAB_FUZZ_COUNTS")
    if path:
        rows = [
            {
                "target": name,
                "property": prop,
                "calls": calls,
                "kinds": len(KINDS.get((name, prop), ())),
            }
            for (name, prop), calls in sorted(COUNTS.items())
        ]
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=1)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_malformed_input_raises_a_clear_error(worker, target):
    @FUZZ_SETTINGS
    @given(data=st.data())
    def check(data):
        args = data.draw(target.data, label="valid arguments")
        candidates = target.bad(args)
        argument = data.draw(st.sampled_from(sorted(candidates)), label="argument")
        bad = data.draw(st.sampled_from(candidates[argument]), label="malformed")
        outcome = worker.run(target.program({**args, argument: bad.value}))
        COUNTS[target.name, "malformed"] += 1
        KINDS.setdefault((target.name, "malformed"), set()).add(
            f"{argument}: {bad.what}"
        )
        assert_clear_error(outcome, bad, f"{target.name}({argument})")

    check()


@pytest.mark.parametrize(
    "target",
    [t for t in TARGETS if t.layouts or t.lenient_layouts],
    ids=lambda t: t.name,
)
def test_odd_layouts_give_the_same_answer(worker, target):
    choices = [
        (arg, kind, False) for arg, kinds in target.layouts.items() for kind in kinds
    ]
    choices += [
        (arg, kind, True)
        for arg, kinds in target.lenient_layouts.items()
        for kind in kinds
    ]

    @FUZZ_SETTINGS
    @given(data=st.data())
    def check(data):
        args = data.draw(target.data, label="valid arguments")
        argument, kind, lenient = data.draw(st.sampled_from(choices), label="layout")
        odd = target.program({**args, argument: Wrap(kind, args[argument])})
        outcome = worker.run(odd, _strip_wraps(odd))
        COUNTS[target.name, "layouts"] += 1
        KINDS.setdefault((target.name, "layouts"), set()).add(f"{argument}: {kind}")
        if lenient and outcome.kind == "raised":
            name = target.names.get(argument, argument)
            assert_clear_error(outcome, Bad(None, (name,), kind), target.name)
            return
        where = f"{target.name}: {kind} {argument}"
        assert outcome.kind == "ok", f"{where}: {outcome.describe()}"
        assert outcome.same, f"{where} changed the answer: {outcome.detail}"

    check()


def test_the_worker_reports_crashes_hangs_and_memory_errors():
    pool = FuzzWorker(timeout=3)
    try:
        crashed = pool.run(call("os:abort"))
        assert crashed.kind == "crashed"
        assert "SIGABRT" in crashed.detail
        hung = pool.run(call("time:sleep", 60))
        assert hung.kind == "timeout"
        too_big = pool.run(call("numpy:ones", 2**33))
        assert too_big.kind == "raised"
        assert too_big.exception == "MemoryError"
        fine = pool.run(call("math:sqrt", 4.0))
        assert fine.kind == "ok"
        assert pool.restarts == 2
    finally:
        pool.close()
