"""Errors about the data lead somewhere: the argument, the column, the row, the fix.

Every public function and estimator that reads a table, given a frame with one bad
cell, names the argument, the column (by its name) and the row of that cell, and says
what to do about it; type errors come before any warning about the data. The options
that decide what happens to bad data share one vocabulary, and the fit of every
estimator takes the data as ``X`` (scikit-learn treats any other first name as
metadata).
"""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest

import privtab as pt
from privtab._estimator import DPEstimatorMixin

N_ROWS = 12
BAD_ROW = 7
LABELS = np.array([0, 1] * (N_ROWS // 2))


def _frame(kind: str, columns: dict) -> object:
    frame = pd.DataFrame(columns)
    return pl.from_pandas(frame) if kind == "polars" else frame


def _codes_with_nan(kind: str) -> object:
    """Codes in two columns, ``'sex'`` and ``'city'``, with NaN in ``'city'``."""
    city = np.array([0.0, 1.0, 2.0] * (N_ROWS // 3))
    city[BAD_ROW] = np.nan
    return _frame(kind, {"sex": [0, 1] * (N_ROWS // 2), "city": city})


def _reals_with_nan(kind: str) -> object:
    city = np.linspace(0.1, 0.9, N_ROWS)
    city[BAD_ROW] = np.nan
    return _frame(kind, {"sex": np.linspace(0.2, 0.6, N_ROWS) ** 2, "city": city})


def _binary_with(kind: str, value: float) -> object:
    city = np.array([0.0, 1.0, 1.0] * (N_ROWS // 3))
    city[BAD_ROW] = value
    return _frame(kind, {"sex": [0, 1] * (N_ROWS // 2), "city": city})


ACC = pt.BudgetAccountant  # a fresh, unlimited accountant per call

#: Every public callable that reads a table of categorical codes.
CODE_TABLE_CALLS = {
    "PrivateKD": lambda X: pt.PrivateKD(1, 1.0, classes=[0, 1], accountant=ACC()).fit(
        X, LABELS, cardinalities=[2, 3]
    ),
    "ProjectedHistogram": lambda X: pt.ProjectedHistogram(
        1.0, n_features=1, classes=[0, 1], accountant=ACC()
    ).fit(X, LABELS, cardinalities=[2, 3]),
    "DILCA": lambda X: pt.DILCA().fit(X, cardinalities=[2, 3]),
    "DPDILCA": lambda X: pt.DPDILCA(1.0, context_size=1, accountant=ACC()).fit(
        X, cardinalities=[2, 3]
    ),
    "discernibility": lambda X: pt.discernibility(
        X, LABELS, [0, 1], cardinalities=[2, 3]
    ),
    "greedy_discernibility": lambda X: pt.greedy_discernibility(
        X, LABELS, 1, cardinalities=[2, 3]
    ),
    "minimum_discerning_attributes": lambda X: pt.minimum_discerning_attributes(
        X, LABELS, cardinalities=[2, 3]
    ),
    "thresholded_histogram": lambda X: pt.thresholded_histogram(
        X, [2, 3], 1.0, accountant=ACC()
    ),
    "count_columns": lambda X: pt.count_columns(X, [2, 3]),
    "mixed_radix_encode": lambda X: pt.mixed_radix_encode(X, [2, 3]),
}

#: Every public callable that reads a table of real numbers.
REAL_TABLE_CALLS = {
    "DPLogisticRegression": lambda X: pt.DPLogisticRegression(
        1.0, data_norm=1.0, classes=[0, 1], accountant=ACC()
    ).fit(X, LABELS),
    "DPLinearSVC": lambda X: pt.DPLinearSVC(
        1.0, data_norm=1.0, classes=[0, 1], accountant=ACC()
    ).fit(X, LABELS),
    "DPFSDR": lambda X: pt.DPFSDR(
        1.0, 1.0, data_norm=1.0, classes=[0, 1], accountant=ACC()
    ).fit(X, LABELS),
    "DPFS": lambda X: pt.DPFS(
        1.0, 1.0, data_norm=1.0, classes=[0, 1], accountant=ACC()
    ).fit(X, LABELS),
    "MicroaggregationMasker": lambda X: pt.MicroaggregationMasker(
        3, 1.0, bounds=(0, 1), accountant=ACC()
    ).fit_transform(X),
    "filter_correlated_features": lambda X: pt.filter_correlated_features(X, 0.9),
    "correlated_degree_matrix": lambda X: pt.correlated_degree_matrix(X, 0.9),
    "correlated_sensitivity": lambda X: pt.correlated_sensitivity(X),
    "pearson_matrix": lambda X: pt.pearson_matrix(X),
    "fscore": lambda X: pt.fscore(X, LABELS),
    "dp_feature_importance": lambda X: pt.dp_feature_importance(
        X, LABELS, 1.0, classes=[0, 1], accountant=ACC()
    ),
    "sse": lambda X: pt.sse(X, X),
    "mean_sse": lambda X: pt.mean_sse(X, X),
}

#: Every public callable that reads a 0/1 table.
BINARY_TABLE_CALLS = {
    "KACSelector": lambda X: pt.KACSelector(2).fit(X, LABELS),
    "KAnonymityGreedy": lambda X: pt.KAnonymityGreedy(2).fit(X, LABELS),
    "CMGreedy": lambda X: pt.CMGreedy(2).fit(X, LABELS),
    "LaplaceDPRelease": lambda X: pt.LaplaceDPRelease(
        1.0, 1, classes=[0, 1], min_class_size=1, accountant=ACC()
    ).fit(X, LABELS),
    "ExponentialDPRelease": lambda X: pt.ExponentialDPRelease(
        1.0, 1, classes=[0, 1], min_class_size=1, accountant=ACC()
    ).fit(X, LABELS),
    "containment_anonymity": lambda X: pt.containment_anonymity(X),
    "maximal_kac_sets": lambda X: pt.maximal_kac_sets(X, 2),
    "maximal_itemsets": lambda X: pt.maximal_itemsets(X, 2),
    "ham_utility": lambda X: pt.ham_utility(X, LABELS, [0, 1]),
    "distcnt_utility": lambda X: pt.distcnt_utility(X, LABELS, [0, 1]),
    "classification_metric": lambda X: pt.classification_metric(X, LABELS, [0, 1]),
    "randomization_flipping": lambda X: pt.randomization_flipping(X, 2),
}


def _names_cell(message: str, column: str = "city", row: int = BAD_ROW) -> bool:
    """Whether ``message`` names ``column`` (quoted, by name) and ``row``."""
    return (
        f"'{column}'" in message and re.search(rf"\brow {row}\b", message) is not None
    )


def _refusal(call, data):
    """The error ``call(data)`` raises, and the warnings raised before it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((ValueError, TypeError)) as info:
            call(data)
    return info.value, [w.category.__name__ for w in caught]


@pytest.mark.parametrize("kind", ["pandas", "polars"])
@pytest.mark.parametrize(
    ("call", "table"),
    [pytest.param(c, _codes_with_nan, id=n) for n, c in CODE_TABLE_CALLS.items()]
    + [pytest.param(c, _reals_with_nan, id=n) for n, c in REAL_TABLE_CALLS.items()]
    + [
        pytest.param(c, lambda kind: _binary_with(kind, np.nan), id=n)
        for n, c in BINARY_TABLE_CALLS.items()
    ],
)
def test_nan_in_a_frame_names_the_column_and_the_row(call, table, kind):
    error, warned = _refusal(call, table(kind))
    message = str(error)
    assert isinstance(error, ValueError), message
    assert _names_cell(message), message
    assert "NaN" in message, message
    assert warned == [], warned


@pytest.mark.parametrize("kind", ["pandas", "polars"])
@pytest.mark.parametrize("call", CODE_TABLE_CALLS.values(), ids=CODE_TABLE_CALLS.keys())
def test_a_code_above_its_cardinality_names_the_column(call, kind):
    city = np.array([0, 1, 2] * (N_ROWS // 3))
    city[BAD_ROW] = 7
    X = _frame(kind, {"sex": [0, 1] * (N_ROWS // 2), "city": city})
    message = str(_refusal(call, X)[0])
    assert f"[{BAD_ROW}, 1] = 7" in message, message
    assert "of column 'city'" in message, message
    assert "cardinality - 1" in message, message


def test_nan_in_an_array_names_the_column_by_position():
    X = np.column_stack([np.zeros(N_ROWS), np.linspace(0.1, 0.9, N_ROWS)])
    X[BAD_ROW, 1] = np.nan
    for call in (
        REAL_TABLE_CALLS["MicroaggregationMasker"],
        REAL_TABLE_CALLS["DPLogisticRegression"],
        CODE_TABLE_CALLS["thresholded_histogram"],
    ):
        message = str(_refusal(call, X)[0])
        assert re.search(rf"\brow {BAD_ROW}\b", message), message
        assert re.search(r"\bcolumn 1\b", message), message


def _vector_with_nan() -> pd.Series:
    x = pd.Series(np.array([0.0, 1.0, 2.0] * (N_ROWS // 3)), name="city")
    x[BAD_ROW] = np.nan
    return x


#: Every public callable that reads a vector of codes or values.
VECTOR_CALLS = {
    "contingency_table": lambda x: pt.contingency_table(x, LABELS, 3, 2),
    "contingency_table (inferred)": lambda x: pt.contingency_table(LABELS, x),
    "mutual_information": lambda x: pt.mutual_information(x, LABELS),
    "symmetric_uncertainty": lambda x: pt.symmetric_uncertainty(LABELS, x),
    "individual_ranking_clusters": lambda x: pt.individual_ranking_clusters(x, 3),
    "microaggregate": lambda x: pt.microaggregate(x, 3, bounds=(0, 2)),
    "laplace_mechanism": lambda x: pt.laplace_mechanism(x, 1.0, 1.0, accountant=ACC()),
    "discrete_laplace_mechanism": lambda x: pt.discrete_laplace_mechanism(
        x, 1, 1.0, accountant=ACC()
    ),
    "count_keys": lambda x: pt.count_keys(x),
}


@pytest.mark.parametrize("call", VECTOR_CALLS.values(), ids=VECTOR_CALLS.keys())
def test_nan_in_a_vector_names_the_row(call):
    error, warned = _refusal(call, _vector_with_nan())
    message = str(error)
    assert isinstance(error, ValueError), message
    assert re.search(rf"\brow {BAD_ROW}\b", message), message
    assert "NaN" in message, message
    assert warned == [], warned


def _raw_frame(kind: str) -> object:
    sex = ["f", "m"] * (N_ROWS // 2)
    return _frame(kind, {"age": np.arange(N_ROWS) % 4, "sex": sex})


#: The code-table callables without declared cardinalities: those warn about
#: inferring them, which must not come before the type error.
INFERRING_CALLS = {
    "PrivateKD": lambda X: pt.PrivateKD(1, 1.0, classes=[0, 1], accountant=ACC()).fit(
        X, LABELS
    ),
    "ProjectedHistogram": lambda X: pt.ProjectedHistogram(
        1.0, n_features=1, classes=[0, 1], accountant=ACC()
    ).fit(X, LABELS),
    "DILCA": lambda X: pt.DILCA().fit(X),
    "DPDILCA": lambda X: pt.DPDILCA(1.0, context_size=1, accountant=ACC()).fit(X),
    "discernibility": lambda X: pt.discernibility(X, LABELS, [0, 1]),
    "thresholded_histogram": lambda X: pt.thresholded_histogram(
        X, None, 1.0, accountant=ACC()
    ),
    "count_columns": lambda X: pt.count_columns(X),
    "mixed_radix_encode": lambda X: pt.mixed_radix_encode(X),
}


@pytest.mark.parametrize("kind", ["pandas", "polars"])
@pytest.mark.parametrize(
    "call",
    list(INFERRING_CALLS.values()) + list(CODE_TABLE_CALLS.values()),
    ids=[f"{n} (inferred)" for n in INFERRING_CALLS] + list(CODE_TABLE_CALLS),
)
def test_raw_categories_point_to_the_encoder_before_any_warning(call, kind):
    error, warned = _refusal(call, _raw_frame(kind))
    message = str(error)
    assert isinstance(error, TypeError), message
    assert "TableEncoder" in message, message
    assert _names_cell(message, "sex", 0), message
    assert warned == [], warned


@pytest.mark.parametrize(
    "call",
    [
        lambda x: pt.contingency_table(x, LABELS),
        lambda x: pt.contingency_table(LABELS, x, 2, 2),
        lambda x: pt.mutual_information(x, LABELS),
    ],
)
def test_a_raw_category_vector_points_to_the_encoder(call):
    x = pd.Series(["f", "m"] * (N_ROWS // 2), name="sex")
    error, warned = _refusal(call, x)
    message = str(error)
    assert isinstance(error, TypeError), message
    assert "TableEncoder" in message, message
    assert "row 0" in message, message
    assert warned == [], warned


@pytest.mark.parametrize("kind", ["pandas", "polars"])
@pytest.mark.parametrize(
    "call", BINARY_TABLE_CALLS.values(), ids=BINARY_TABLE_CALLS.keys()
)
def test_a_non_binary_frame_names_the_column_and_get_dummies(call, kind):
    error, _ = _refusal(call, _binary_with(kind, 2.0))
    message = str(error)
    assert isinstance(error, ValueError), message
    assert _names_cell(message), message
    assert "pandas.get_dummies" in message, message


#: sse and mean_sse compare the numeric columns of frames and leave the others out.
STRICT_REAL_CALLS = {
    n: c for n, c in REAL_TABLE_CALLS.items() if n not in ("sse", "mean_sse")
}


@pytest.mark.parametrize(
    "call", STRICT_REAL_CALLS.values(), ids=STRICT_REAL_CALLS.keys()
)
def test_a_string_in_a_real_table_names_the_column_and_the_row(call):
    city = np.linspace(0.1, 0.9, N_ROWS).astype(object)
    city[BAD_ROW] = "Paris"
    X = pd.DataFrame({"sex": np.linspace(0.2, 0.6, N_ROWS), "city": city})
    error, warned = _refusal(call, X)
    message = str(error)
    assert isinstance(error, TypeError), message
    assert _names_cell(message), message
    assert warned == [], warned


# One vocabulary ------------------------------------------------------------------------
def _public_classes() -> list[type]:
    return [
        obj
        for name in pt.__all__
        if isinstance(obj := getattr(pt, name), type) and hasattr(obj, "fit")
    ]


@pytest.mark.parametrize("cls", _public_classes(), ids=lambda c: c.__name__)
def test_every_fit_takes_the_data_as_x(cls):
    first = list(inspect.signature(cls.fit).parameters)[1]
    assert first == "X"
    # scikit-learn routes every other fit parameter as metadata.
    estimator = cls.__new__(cls)
    requests = estimator._get_metadata_request().fit.requests
    assert "B" not in requests
    assert "X" not in requests


def _refusal_options() -> list[tuple[type, str]]:
    """Every (class, parameter) whose default says what to do with bad data."""
    pairs = []
    for cls in _public_classes():
        for name, param in inspect.signature(cls.__init__).parameters.items():
            if param.default in ("raise", "error"):
                pairs.append((cls, name))
    return pairs


def test_refusing_bad_data_is_spelled_raise_everywhere():
    pairs = _refusal_options()
    assert {(c.__name__, n) for c, n in pairs} >= {
        ("TableEncoder", "missing"),
        ("TableEncoder", "out_of_bounds"),
        ("MicroaggregationMasker", "non_numeric"),
        ("MicroaggregationMasker", "out_of_bounds"),
    }
    for cls, name in pairs:
        default = inspect.signature(cls.__init__).parameters[name].default
        assert default == "raise", (cls.__name__, name)


def test_error_is_a_deprecated_spelling_of_raise():
    X = np.array([[0.5], [2.0]])
    for raise_it in ("raise", "error"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            encoder = pt.TableEncoder(
                bounds={0: (0, 1)}, bins=2, out_of_bounds=raise_it
            )
            with pytest.raises(ValueError, match="outside its bounds"):
                encoder.fit_transform(X)
            masker = pt.MicroaggregationMasker(
                1,
                1.0,
                mechanism="dp",
                bounds=(0, 1),
                out_of_bounds=raise_it,
                accountant=ACC(),
            )
            with pytest.raises(ValueError, match="outside the declared bounds"):
                masker.fit_transform(X)
        deprecated = [w for w in caught if issubclass(w.category, FutureWarning)]
        if raise_it == "raise":
            assert deprecated == []
        else:
            assert len(deprecated) == 2
            assert all("out_of_bounds='raise'" in str(w.message) for w in deprecated)
    with (
        pytest.warns(FutureWarning, match="missing='raise'"),
        pytest.raises(ValueError, match="missing value"),
    ):
        pt.TableEncoder(missing="error").fit_transform(np.array([[np.nan], [1.0]]))


def _fitted_dp_estimators():
    X = np.array([[0.1, 0.2], [0.4, 0.9], [0.3, 0.5], [0.8, 0.1]] * 3)
    codes = (X > 0.35).astype(np.int64)
    y = np.array([0, 1, 1, 0] * 3)
    for mechanism in ("idp_cbls", "idp_ls", "dp"):
        masker = pt.MicroaggregationMasker(
            3, 1.0, mechanism=mechanism, bounds=(0, 1), accountant=ACC()
        )
        yield masker, lambda m=masker: m.fit(X)
    selector = pt.PrivateKD(1, 1.0, classes=[0, 1], accountant=ACC())
    yield selector, lambda: selector.fit(codes, y, cardinalities=[2, 2])
    model = pt.DPLogisticRegression(
        1.0, data_norm=2.0, classes=[0, 1], accountant=ACC()
    )
    yield model, lambda: model.fit(X, y)


@pytest.mark.parametrize("index", range(5))
def test_privacy_guarantee_agrees_with_the_ledger(index):
    estimator, fit = list(_fitted_dp_estimators())[index]
    assert isinstance(estimator, DPEstimatorMixin)
    before = estimator.privacy_guarantee
    fit()
    assert {entry.guarantee for entry in estimator.privacy_ledger_} == {before}
    assert estimator.release()["guarantee"] == before
    if isinstance(estimator, pt.MicroaggregationMasker):
        assert before == ("dp" if estimator.mechanism == "dp" else "idp")
