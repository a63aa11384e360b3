"""Paper 002: DP and individual-DP release by individual-ranking microaggregation.

Clusters, centroids and the three sensitivities are checked against an independent
NumPy reference written from PAPERS.md (section 002) on hypothesis data with ties,
duplicates at both extremes, n not divisible by k, n < 2k and n = k. The noise is
checked with a KS test at ALPHA = 1e-6 with a ±30 % power check.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import privtab as pt
from privtab.exceptions import PrivacyLeakWarning

from _stats import WRONG_SCALES, assert_accepts, assert_rejects, ks_pvalue


# NumPy reference ------------------------------------------------------------------------
def reference_clusters(x, k):
    """Stable ranks cut into groups of k; the remainder joins the last group."""
    order = np.argsort(x, kind="stable")
    n = len(x)
    n_groups = max(n // k, 1)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.minimum(np.arange(n) // k, n_groups - 1)
    return labels


def reference_mask_inputs(x, k, mechanism, lo, hi):
    """Per cluster (in rank order): centroid used and sensitivity."""
    labels = reference_clusters(x, k)
    centroids, sens = [], []
    for j in range(labels.max() + 1):
        c = np.sort(x[labels == j])
        size = len(c)
        if mechanism == "dp":
            centroids.append(c.mean())
            sens.append((hi - lo) / size)
        elif mechanism == "idp_ls":
            centroids.append(c.mean())
            sens.append(max(hi - c[0], c[-1] - lo) / size)
        else:
            pre = c.copy()
            pre[0], pre[-1] = c[1], c[-2]
            centroids.append(pre.mean())
            x_min, x_min2, x_min3 = c[0], c[1], c[2]
            x_max, x_max2, x_max3 = c[-1], c[-2], c[-3]
            up = abs(x_max - x_min2) + abs(x_min3 - x_min2) + abs(x_max - x_max2)
            down = abs(x_min - x_max2) + abs(x_max3 - x_max2) + abs(x_min - x_min2)
            sens.append(max(up, down) / size)
    return labels, np.array(centroids), np.array(sens)


def reference_mean_sse(X, X_masked):
    """The paper's eq. 4-5 with PAPERS.md's distance."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(X_masked, dtype=float)
    m = X.shape[1]
    var = X.var(axis=0)
    dist = np.sqrt((((X - Y) / var) ** 2).sum(axis=1)) / m
    return float((dist**2).sum()), float((dist**2).sum() / X.shape[0])


# Data -----------------------------------------------------------------------------------
@st.composite
def column_and_k(draw, min_k=1):
    k = draw(st.integers(min_k, 7))
    n = draw(st.integers(k, 40))
    pool = draw(
        st.lists(st.integers(0, 20), min_size=1, max_size=6, unique=True).map(sorted)
    )
    values = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    return np.array(values, dtype=float), k


def masker(k, mechanism, epsilon=1e8, **kwargs):
    return pt.MicroaggregationMasker(
        k, epsilon, mechanism=mechanism, bounds=(-1.0, 25.0), random_state=0, **kwargs
    )


# Clusters, centroids, sensitivities -----------------------------------------------------
@given(column_and_k())
def test_clusters_equal_the_reference(data):
    x, k = data
    np.testing.assert_array_equal(
        pt.individual_ranking_clusters(x, k), reference_clusters(x, k)
    )


@pytest.mark.parametrize(("n", "k"), [(10, 3), (9, 3), (5, 3), (3, 3), (7, 4), (1, 1)])
def test_cluster_sizes(n, k):
    labels = pt.individual_ranking_clusters(np.arange(n, dtype=float)[::-1], k)
    sizes = np.bincount(labels)
    assert len(sizes) == max(n // k, 1)
    assert np.all(sizes[:-1] == k)
    assert k <= sizes[-1] <= 2 * k - 1 or n < k


@pytest.mark.parametrize("mechanism", ["dp", "idp_ls", "idp_cbls"])
@settings(max_examples=60, deadline=None)
@given(data=column_and_k(min_k=3))
def test_centroids_and_sensitivities_equal_the_reference(mechanism, data):
    x, k = data
    labels, centroids, sens = reference_mask_inputs(x, k, mechanism, -1.0, 25.0)
    exact = pt.microaggregate(x, k, mechanism=mechanism, bounds=(-1.0, 25.0))
    np.testing.assert_array_equal(exact.labels, labels)
    np.testing.assert_allclose(exact.centroids, centroids, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(exact.sensitivities, sens, rtol=1e-12, atol=1e-12)
    model = masker(k, mechanism)
    out = model.fit_transform(x[:, None])
    np.testing.assert_allclose(model.sensitivities_[0], sens, rtol=1e-12, atol=1e-12)
    # Huge epsilon: the release is the centroid up to noise of scale <= 26/1e8.
    np.testing.assert_allclose(out[:, 0], centroids[labels], atol=1e-5)


def test_cbls_preprocessing_counts_duplicates():
    bounds = (-1.0, 25.0)
    x = np.array([1.0, 1.0, 1.0, 5.0, 9.0, 9.0])
    # One 1 becomes the second smallest (1) and one 9 the second largest (9).
    exact = pt.microaggregate(x, 6, bounds=bounds)
    assert exact.centroids[0] == pytest.approx(x.mean())
    x = np.array([0.0, 2.0, 4.0, 6.0, 8.0])
    exact = pt.microaggregate(x, 5, bounds=bounds)
    assert exact.centroids[0] == pytest.approx((2 + 2 + 4 + 6 + 6) / 5)
    # |8 − 2| + |4 − 2| + |8 − 6| = 10 against |0 − 6| + |4 − 6| + |0 − 2| = 10.
    assert exact.sensitivities[0] == pytest.approx(10 / 5)


def test_invalid_parameters_raise():
    x = np.arange(10, dtype=float)[:, None]
    with pytest.raises(ValueError, match="k"):
        masker(2, "idp_cbls").fit_transform(x)
    with pytest.raises(ValueError, match="k"):
        masker(11, "dp").fit_transform(x)
    with pytest.raises(ValueError, match="k"):
        pt.individual_ranking_clusters(np.arange(3.0), 4)
    with pytest.raises(ValueError, match="mechanism"):
        masker(3, "laplace").fit_transform(x)
    with pytest.raises(ValueError, match="epsilon"):
        pt.MicroaggregationMasker(3, -1.0, bounds=(0, 10)).fit_transform(x)
    with pytest.raises(ValueError, match="finite"):
        masker(3, "dp").fit_transform(np.array([[1.0], [np.nan], [2.0]]))
    with pytest.raises(ValueError, match="bounds"):
        pt.MicroaggregationMasker(3, 1.0, bounds=(5.0, 1.0)).fit_transform(x)
    with pytest.raises(ValueError, match="outside"):
        pt.MicroaggregationMasker(3, 1.0, bounds=(0.0, 5.0)).fit_transform(x)
    with pytest.raises(ValueError, match="epsilon_split"):
        pt.MicroaggregationMasker(
            3, 1.0, bounds=(0.0, 10.0), epsilon_split=[0.5, 0.5]
        ).fit_transform(x)


# Noise ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mechanism", ["dp", "idp_ls", "idp_cbls"])
def test_noise_has_the_stated_laplace_scale(mechanism):
    # One cluster per release: n = k, so every record carries the same noisy centroid;
    # 4000 columns give 4000 independent draws of one centroid's noise.
    rng = np.random.default_rng(1)
    base = rng.uniform(40, 60, size=5)
    X = np.tile(base[:, None], (1, 4000))
    # ε_a = 5 per attribute keeps clamping at the bounds [0, 100] negligible.
    epsilon = 20_000.0
    model = pt.MicroaggregationMasker(
        5, epsilon, mechanism=mechanism, bounds=(0.0, 100.0), random_state=3
    )
    out = model.fit_transform(X)
    exact = pt.microaggregate(base, 5, mechanism=mechanism, bounds=(0.0, 100.0))
    noise = out[0] - exact.centroids[0]
    sensitivity = model.sensitivities_[0][0]
    assert np.allclose([s[0] for s in model.sensitivities_], sensitivity)
    scale = sensitivity / (epsilon / 4000)
    assert_accepts(ks_pvalue(noise, stats.laplace(scale=scale)))
    for factor in WRONG_SCALES:
        assert_rejects(ks_pvalue(noise, stats.laplace(scale=scale * factor)))


def test_outputs_stay_inside_the_bounds():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 10, size=(500, 3))
    out = pt.MicroaggregationMasker(
        3, 0.01, mechanism="dp", bounds=(0.0, 10.0), random_state=0
    ).fit_transform(X)
    assert out.min() >= 0.0
    assert out.max() <= 10.0


def test_same_seed_same_output_and_one_value_per_cluster():
    rng = np.random.default_rng(3)
    X = rng.normal(50, 5, size=(103, 4))
    kwargs = {"bounds": (0.0, 100.0), "random_state": 7}
    a = pt.MicroaggregationMasker(5, 1.0, **kwargs).fit_transform(X)
    b = pt.MicroaggregationMasker(5, 1.0, **kwargs).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    for j in range(4):
        labels = pt.individual_ranking_clusters(X[:, j], 5)
        for c in np.unique(labels):
            assert len(np.unique(a[labels == c, j])) == 1


# Budget and guarantees ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mechanism", "guarantee"), [("dp", "dp"), ("idp_ls", "idp"), ("idp_cbls", "idp")]
)
def test_ledger_sums_to_epsilon_and_names_the_guarantee(mechanism, guarantee):
    X = np.random.default_rng(4).uniform(0, 10, size=(60, 3))
    acc = pt.BudgetAccountant(2.0)
    model = pt.MicroaggregationMasker(
        3, 1.0, mechanism=mechanism, bounds=(0.0, 10.0), random_state=0, accountant=acc
    )
    model.fit_transform(X)
    assert model.epsilon_spent_ == 1.0
    assert sum(e for _, e in model.privacy_ledger_) == 1.0
    assert len(model.privacy_ledger_) == 3
    assert all(entry.guarantee == guarantee for entry in model.privacy_ledger_)
    label = "ε-iDP" if guarantee == "idp" else "ε-DP"
    assert all(label in entry.label for entry in model.privacy_ledger_)
    assert acc.spent == 1.0
    pt.laplace_mechanism(0.0, 1.0, 0.5, random_state=0, accountant=acc)
    expected = {"dp": 0.5, "idp": 0.0}
    expected[guarantee] += 1.0
    assert acc.spent_by("dp") == expected["dp"]
    assert acc.spent_by("idp") == expected["idp"]
    report = acc.report()
    assert (
        f"of which ε-iDP {expected['idp']:>12.6g}".split()
        == report.splitlines()[-1].split()
    )


def test_epsilon_split_is_used_per_attribute():
    X = np.random.default_rng(5).uniform(0, 10, size=(60, 2))
    model = pt.MicroaggregationMasker(
        3, 1.0, bounds=(0.0, 10.0), epsilon_split=[0.25, 0.75], random_state=0
    )
    model.fit_transform(X)
    assert [e for _, e in model.privacy_ledger_] == [0.25, 0.75]


def test_accountant_is_checked_before_the_data():
    acc = pt.BudgetAccountant(0.5)
    with pytest.raises(pt.exceptions.BudgetExceededError):
        pt.MicroaggregationMasker(
            3, 1.0, bounds=(0.0, 1.0), accountant=acc
        ).fit_transform("not even data")


# Bounds and frames ----------------------------------------------------------------------
def test_inferred_bounds_warn_and_follow_the_paper():
    X = np.random.default_rng(6).uniform(1, 10, size=(30, 2))
    model = pt.MicroaggregationMasker(3, 1.0, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        model.fit_transform(X)
    np.testing.assert_allclose(
        np.asarray(model.bounds_),
        [[0.0, 1.5 * X[:, 0].max()], [0.0, 1.5 * X[:, 1].max()]],
    )


BOUNDS = {"income": (0.0, 100.0), "tax": (0.0, 10.0)}


def patients():
    """Two numeric columns among identifying ones, indexed by name, with attrs."""
    frame = pd.DataFrame(
        {
            "income": [10.0, 20, 30, 40, 50, 60],
            "diagnosis": ["flu", "hiv", "flu", "asthma", "flu", "hiv"],
            "tax": [1, 2, 3, 4, 5, 6],
            "smoker": [True, False, True, False, False, True],
            "born": pd.to_datetime(["1950-01-02", "1961-03-04", "1972-05-06"] * 2),
            "zip": pd.Categorical(
                ["08001", "08002", "08001", "28001", "28002", "08001"]
            ),
        },
        index=pd.Index(["ana", "ben", "carla", "dan", "eva", "fred"], name="patient"),
    )
    frame.attrs["source"] = "ward 3 admissions"
    return frame


IDENTIFYING = ["diagnosis", "smoker", "born", "zip"]


def frame_of(kind, frame):
    return frame if kind == "pandas" else pl.from_pandas(frame)


def columns_of(frame):
    return list(frame.columns)


def numeric_masker(**kwargs):
    return pt.MicroaggregationMasker(3, 1.0, bounds=BOUNDS, random_state=0, **kwargs)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_non_numeric_columns_raise_by_default_naming_them(kind):
    X = frame_of(kind, patients())
    acc = pt.BudgetAccountant(1.0)
    with pytest.raises(TypeError) as error:
        pt.MicroaggregationMasker(3, 1.0, bounds=BOUNDS, accountant=acc).fit_transform(
            X
        )
    message = str(error.value)
    for column in IDENTIFYING:
        assert repr(column) in message
    assert "non_numeric='drop'" in message
    assert "non_numeric='passthrough'" in message
    assert acc.spent == 0.0


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_drop_releases_the_masked_columns_only(kind):
    X = frame_of(kind, patients())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = numeric_masker(non_numeric="drop").fit_transform(X)
    assert columns_of(out) == ["income", "tax"]
    income = np.asarray(out["income"])
    labels = pt.individual_ranking_clusters(patients()["income"].to_numpy(), 3)
    # One noisy centroid per cluster of three, inside the declared bounds.
    assert [len(np.unique(income[labels == c])) for c in (0, 1)] == [1, 1]
    assert income.min() >= 0.0
    assert income.max() <= 100.0


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_passthrough_warns_naming_every_column_it_copies(kind):
    X = frame_of(kind, patients())
    with pytest.warns(PrivacyLeakWarning, match="unmasked") as caught:
        out = numeric_masker(non_numeric="passthrough").fit_transform(X)
    (warning,) = caught
    for column in IDENTIFYING:
        assert repr(column) in str(warning.message)
    assert columns_of(out) == columns_of(X)
    for column in IDENTIFYING:
        assert list(out[column]) == list(X[column])


def test_pandas_release_has_a_fresh_index_and_no_attrs():
    X = patients()
    out = numeric_masker(non_numeric="drop").fit_transform(X)
    pd.testing.assert_index_equal(out.index, pd.RangeIndex(6))
    assert out.attrs == {}
    assert out["income"].attrs == {}


@pytest.mark.parametrize("identifying", [False, True])
def test_neighbouring_tables_differing_outside_the_numbers_give_the_same_release(
    identifying,
):
    # D' replaces the record of "ben" by one with another name (and diagnosis and
    # birth date) but the same numbers. A caller sees the release only: on the
    # defaults (on a numeric table) and with non_numeric="drop" it must not differ.
    D = patients()
    D_prime = D.rename(index={"ben": "bob"})
    D_prime.loc["bob", "diagnosis"] = "flu"
    D_prime.loc["bob", "born"] = pd.Timestamp("1940-01-01")
    D_prime.attrs["source"] = "ward 4 admissions"
    options = {"non_numeric": "drop"} if identifying else {}
    seen = []
    for data in (D, D_prime):
        if not identifying:
            data = data[["income", "tax"]]
        model = pt.MicroaggregationMasker(
            3, 1.0, bounds=BOUNDS, random_state=0, **options
        )
        seen.append(model.fit_transform(data))
    pd.testing.assert_frame_equal(seen[0], seen[1])
    assert seen[0].attrs == seen[1].attrs


def test_keep_index_and_keep_attrs_copy_them_with_a_warning():
    X = patients()
    with pytest.warns(PrivacyLeakWarning) as caught:
        out = numeric_masker(
            non_numeric="drop", keep_index=True, keep_attrs=True
        ).fit_transform(X)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert "X.attrs" in messages[0]
    assert "index" in messages[1]
    pd.testing.assert_index_equal(out.index, X.index)
    assert out.attrs == {"source": "ward 3 admissions"}


@pytest.mark.parametrize(
    ("param", "value", "error", "message"),
    [
        ("non_numeric", "keep", ValueError, "be one of 'raise', 'drop', 'passthrough'"),
        ("keep_index", "yes", TypeError, "be a bool"),
        ("keep_attrs", 1, TypeError, "be a bool"),
    ],
)
def test_invalid_release_options_raise_naming_the_argument(
    param, value, error, message
):
    with pytest.raises(error, match=f"{param} must .*{message}"):
        numeric_masker(**{param: value}).fit_transform(patients())


def test_release_holds_only_the_covered_attributes():
    X = patients()
    acc = pt.BudgetAccountant(1.0)
    model = pt.MicroaggregationMasker(
        3,
        1.0,
        mechanism="idp_ls",
        bounds=BOUNDS,
        non_numeric="passthrough",
        keep_index=True,
        keep_attrs=True,
        random_state=0,
        accountant=acc,
    )
    with pytest.warns(PrivacyLeakWarning):
        model.fit_transform(X)
    published = model.release()
    attributes = published["attributes"]
    assert set(attributes) == {"masked_", "n_clusters_", "epsilons_"}
    masked = attributes["masked_"]
    # The masked columns only: no identifying column, no names, no attrs.
    assert list(masked.columns) == ["income", "tax"]
    pd.testing.assert_index_equal(masked.index, pd.RangeIndex(6))
    assert masked.attrs == {}
    np.testing.assert_array_equal(
        masked.to_numpy(), model.masked_[["income", "tax"]].to_numpy()
    )
    np.testing.assert_array_equal(attributes["n_clusters_"], [6 // 3, 6 // 3])
    np.testing.assert_array_equal(attributes["epsilons_"], [0.5, 0.5])
    assert "accountant" not in published["params"]
    assert "random_state" not in published["params"]
    text = repr(published)
    for secret in ["carla", "hiv", "ward 3", "1950", "08001"]:
        assert secret not in text
    # A copy: changing the estimator afterwards does not reach what was published.
    model.masked_.iloc[0, 0] = -1.0
    assert masked.iloc[0, 0] != -1.0


def test_release_of_an_array_is_a_copy_of_the_whole_release():
    X = np.random.default_rng(7).uniform(0, 10, size=(30, 2))
    model = pt.MicroaggregationMasker(3, 1.0, bounds=(0.0, 10.0), random_state=0)
    out = model.fit_transform(X)
    released = model.release()["attributes"]["masked_"]
    np.testing.assert_array_equal(released, out)
    assert not np.shares_memory(released, out)


# Utility measures -----------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.integers(1, 5), st.integers(0, 10_000))
def test_sse_equals_the_reference(n, m, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * rng.uniform(0.5, 5, size=m)
    Y = X + rng.normal(size=(n, m))
    sse, mean = reference_mean_sse(X, Y)
    assert pt.sse(X, Y) == pytest.approx(sse, rel=1e-12)
    assert pt.mean_sse(X, Y) == pytest.approx(mean, rel=1e-12)


def test_sse_rejects_bad_shapes():
    with pytest.raises(ValueError, match="shape"):
        pt.sse(np.zeros((3, 2)), np.zeros((3, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # A constant attribute has zero variance: it adds nothing (never NaN).
        X = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 4.0]])
        assert math.isfinite(pt.sse(X, X + 1.0))


# The release keeps the input's dtype ----------------------------------------------------
DTYPE_BOUNDS = [(0.0, 50.0), (-3.5, 7.25)]
DTYPE_VALUES = np.column_stack(
    [[10, 12, 11, 40, 42, 41, 30, 7], [1, -3, 2, 7, 0, 5, 6, -1]]
).astype(np.float64)


def _release(X, mechanism="idp_ls", seed=11):
    masker = pt.MicroaggregationMasker(
        3,
        2.0,
        mechanism=mechanism,
        bounds=DTYPE_BOUNDS,
        random_state=seed,
        accountant=pt.BudgetAccountant(),
    )
    return masker.fit_transform(X)


@pytest.mark.parametrize("mechanism", ["idp_cbls", "idp_ls", "dp"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_narrow_float_release_keeps_its_dtype_inside_the_bounds(dtype, mechanism):
    wide = _release(DTYPE_VALUES, mechanism)
    narrow = _release(DTYPE_VALUES.astype(dtype), mechanism)
    assert narrow.dtype == dtype
    # The float64 release, rounded to the nearest value of the dtype (the same
    # draws: the values are the same numbers), then moved inside the bounds.
    for j, (lo, hi) in enumerate(DTYPE_BOUNDS):
        assert np.all(narrow[:, j] >= lo)
        assert np.all(narrow[:, j] <= hi)
        spacing = np.abs(np.spacing(wide[:, j].astype(dtype)).astype(np.float64))
        assert np.all(np.abs(narrow[:, j] - wide[:, j]) <= spacing)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16, np.int8])
def test_an_integer_release_is_rounded_inside_the_bounds(dtype):
    values = DTYPE_VALUES.copy()
    values[:, 1] += 3  # non-negative, so that uint16 holds it
    bounds = [(0.0, 50.0), (0.0, 10.75)]
    masker = pt.MicroaggregationMasker(
        3, 2.0, bounds=bounds, random_state=5, accountant=pt.BudgetAccountant()
    )
    wide = masker.fit_transform(values)
    masker.set_params(random_state=5)
    ints = masker.fit_transform(values.astype(dtype))
    assert ints.dtype == dtype
    # Rounding is post-processing: the nearest integer of the float release, moved
    # to the nearest integer inside the bounds (10.75 -> 10).
    expected = np.clip(np.rint(wide), [0, 0], [50, 10])
    np.testing.assert_array_equal(ints, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_numpy_release_is_column_major_in_every_dtype(dtype, order):
    # The kernel writes attribute after attribute; the release keeps that order
    # (documented) rather than paying for an (n, d) copy, whatever the input's order.
    values = np.asarray(DTYPE_VALUES + 5, dtype=dtype, order=order)
    bounds = [(0.0, 60.0), (0.0, 20.0)]
    masker = pt.MicroaggregationMasker(
        3, 2.0, bounds=bounds, random_state=7, accountant=pt.BudgetAccountant()
    )
    release = masker.fit_transform(values)
    assert release.shape == values.shape
    assert release.dtype == dtype
    assert release.flags.f_contiguous
    # The same release from the input in the other order.
    masker.set_params(random_state=7)
    other = np.asarray(values, order="F" if order == "C" else "C")
    np.testing.assert_array_equal(masker.fit_transform(other), release)


def test_a_numpy_release_falls_back_to_float64_where_a_dtype_cannot_hold_it():
    # No integer lies in (0.2, 0.8): the whole array is released as float64.
    X = np.array([[1, 1], [2, 2], [3, 3]], dtype=np.int8)
    masker = pt.MicroaggregationMasker(
        3,
        1.0,
        bounds=[(0, 5), (0.2, 0.8)],
        out_of_bounds="clip",
        accountant=pt.BudgetAccountant(),
    )
    assert masker.fit_transform(X).dtype == np.float64
    # Booleans are not a numeric release either.
    boolean = np.array([[True], [False], [True]])
    masker = pt.MicroaggregationMasker(
        3, 1.0, bounds=(0, 1), accountant=pt.BudgetAccountant()
    )
    assert masker.fit_transform(boolean).dtype == np.float64
    # Nor are nested lists, which have no dtype of their own.
    assert masker.fit_transform([[1], [0], [1]]).dtype == np.float64


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_a_frame_release_keeps_each_column_dtype(kind):
    frame = pd.DataFrame(
        {
            "age": DTYPE_VALUES[:, 0].astype(np.int64),
            "score": DTYPE_VALUES[:, 1].astype(np.float32),
        }
    )
    X = pl.from_pandas(frame) if kind == "polars" else frame
    out = _release(X)
    if kind == "pandas":
        assert list(out.dtypes) == [np.dtype(np.int64), np.dtype(np.float32)]
        ages, scores = out["age"].to_numpy(), out["score"].to_numpy()
    else:
        assert out.schema == pl.Schema({"age": pl.Int64, "score": pl.Float32})
        ages, scores = out["age"].to_numpy(), out["score"].to_numpy()
    wide = _release(DTYPE_VALUES)
    np.testing.assert_array_equal(ages, np.clip(np.rint(wide[:, 0]), 0, 50))
    spacing = np.abs(np.spacing(wide[:, 1].astype(np.float32)).astype(np.float64))
    assert np.all(np.abs(scores - wide[:, 1]) <= spacing)


def test_a_pandas_nullable_column_keeps_its_extension_dtype():
    X = pd.DataFrame({"age": pd.array([10, 12, 11, 40, 42, 41], dtype="Int64")})
    out = pt.MicroaggregationMasker(
        3, 1.0, bounds=(0, 50), accountant=pt.BudgetAccountant()
    ).fit_transform(X)
    assert out["age"].dtype == pd.Int64Dtype()
