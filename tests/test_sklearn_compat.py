"""scikit-learn's estimator checks, in the configurations users meet.

The encoder, the PrivateKD selector, the DP linear models and the DILCA / DP-DILCA
distance learners run the checks of
``estimator_checks_generator``. The array-API check only applies to estimators that
claim array-API support; none of these does, so the check would only ever be skipped.
It is left out rather than counted as a skipped test.
"""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import (
    check_dataframe_column_names_consistency,
    estimator_checks_generator,
)

from privtab import (
    DILCA,
    DPDILCA,
    DPFS,
    DPFSDR,
    CMGreedy,
    DPLinearSVC,
    DPLogisticRegression,
    ExponentialDPRelease,
    KACSelector,
    KAnonymityGreedy,
    LaplaceDPRelease,
    PrivateKD,
    TableEncoder,
)

ENCODERS = [
    TableEncoder(),
    TableEncoder(missing="category"),
    TableEncoder(bins=3, out_of_bounds="clip"),
]

# Seeded, so that fits are reproducible (a fixed seed gives the same selection on any
# number of threads).
SELECTORS = [
    PrivateKD(1, epsilon=1.0, random_state=0),
    PrivateKD(1, epsilon=100.0, random_state=1, n_threads=1),
]

# The instances declare data_norm (no PrivacyLeakWarning for it) and a seed (fits are
# reproducible); the label set comes from each check's data. Both estimators set the
# `poor_score` classifier tag: DP noise costs accuracy, so the generic 0.83 accuracy
# threshold is not asserted.
DP_MODELS = [
    DPLogisticRegression(epsilon=1.0, data_norm=10.0, random_state=0),
    DPLogisticRegression(epsilon=1.0, method="output", data_norm=10.0, random_state=0),
    DPLinearSVC(epsilon=1.0, data_norm=10.0, random_state=0),
    DPLinearSVC(epsilon=1.0, method="objective", data_norm=10.0, random_state=0),
]

# PrivateKD takes categorical codes: its tags say so (`input_tags.categorical`, which
# makes the checks round their data to non-negative integer codes, and
# `input_tags.positive_only`). Two checks feed dtypes that privtab rejects with a
# TypeError, as it does everywhere, where the checks want them converted or a ValueError.
SELECTOR_FAILURES = {
    "check_complex_data": (
        "complex X raises TypeError (codes need an integer dtype), the check wants "
        "a ValueError"
    ),
    "check_dtype_object": (
        "object arrays are raw categorical data for TableEncoder; PrivateKD takes "
        "integer codes and raises TypeError"
    ),
}


# The selectors of paper 004 take 0/1 matrices. The checks draw real-valued data (and no
# tag makes them binary), which these selectors reject with a ValueError naming the
# first non-binary value. Every check that needs a successful fit therefore fails; the
# rest (cloning, parameters, tags, unfitted errors, empty data, 1-D input) pass. The
# same properties are tested on binary data in test_kac.py.
_NON_BINARY = "the check fits on real-valued data; X must be binary (0/1): ValueError"
BINARY_SELECTORS = [
    KACSelector(2),
    KACSelector(2, method="greedy_ham", skip_infeasible=True),
    KACSelector(2, method="maximal"),
    KACSelector(2, method="maximal_feasible", utility="ham", top_t=3),
    KAnonymityGreedy(2),
    CMGreedy(2),
]
BINARY_SELECTOR_FAILURES = {
    name: _NON_BINARY
    for name in (
        "check_dict_unchanged",
        "check_dont_overwrite_parameters",
        "check_dtype_object",
        "check_estimators_dtypes",
        "check_estimators_fit_returns_self",
        "check_estimators_nan_inf",
        "check_estimators_overwrite_params",
        "check_estimators_pickle",
        "check_f_contiguous_array_estimator",
        "check_fit2d_1feature",
        "check_fit2d_1sample",
        "check_fit2d_predict1d",
        "check_fit_check_is_fitted",
        "check_fit_idempotent",
        "check_fit_score_takes_y",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_n_features_in",
        "check_n_features_in_after_fitting",
        "check_pipeline_consistency",
        "check_positive_only_tag_during_fit",
        "check_readonly_memmap_input",
        "check_requires_y_none",
        "check_transformer_data_not_an_array",
        "check_transformer_general",
        "check_transformer_preserve_dtypes",
    )
} | {
    "check_complex_data": (
        "complex X raises TypeError (X must hold 0/1 numbers), the check wants a "
        "ValueError"
    ),
    "check_estimator_sparse_array": (
        "sparse B is supported (input_tags.sparse) but the check's sparse data is "
        "real-valued: ValueError"
    ),
    "check_estimator_sparse_matrix": (
        "sparse B is supported (input_tags.sparse) but the check's sparse data is "
        "real-valued: ValueError"
    ),
    "check_estimator_sparse_tag": (
        "sparse B is supported, but the check fits on real-valued sparse data"
    ),
}


# DILCA and DPDILCA take categorical codes like PrivateKD (same tags, same two expected
# failures). The DPDILCA instances are seeded, so their `non_deterministic` tag is off
# and the reproducibility checks run; like the DP models they charge the default
# (unlimited) accountant.
DISTANCES = [
    DILCA(),
    DILCA("relevance_redundancy"),
    DPDILCA(1.0, random_state=0, context_size=1),
    DPDILCA(10.0, method="baseline", random_state=0, context_size=1),
]

DISTANCE_FAILURES = {
    "check_complex_data": (
        "complex X raises TypeError (codes need an integer dtype), the check wants "
        "a ValueError"
    ),
    "check_dtype_object": (
        "object arrays are raw categorical data for TableEncoder; DILCA and DPDILCA "
        "take integer codes and raise TypeError"
    ),
}

# The DP baselines of paper 004 (feature selection + noisy histogram release) take 0/1
# matrices too, so the same checks fail for the same reason. The instances are seeded,
# so their `non_deterministic` tag is off and no check skips itself. One feature per
# fit, so that the one-feature data of the checks is not rejected first.
# The default accountant is unbounded; each fit charges ε there.
DP_RELEASES = [
    LaplaceDPRelease(1.0, 1, random_state=0),
    ExponentialDPRelease(1.0, 1, random_state=0),
]
_SPARSE_UNTAGGED = (
    "sparse B is accepted without densifying, though input_tags.sparse is not set; "
    "the check's sparse data is real-valued: ValueError"
)
DP_RELEASE_FAILURES = BINARY_SELECTOR_FAILURES | {
    "check_estimator_sparse_array": _SPARSE_UNTAGGED,
    "check_estimator_sparse_matrix": _SPARSE_UNTAGGED,
    "check_estimator_sparse_tag": _SPARSE_UNTAGGED,
    "check_positive_only_tag_during_fit": _NON_BINARY,
}


def expected_failed_checks(estimator) -> dict[str, str]:
    """Checks an estimator is known to fail, with the reason.

    None for the encoder and the DP models. For the encoder, checks whose premise does
    not apply are answered by tags instead: ``transformer_tags.preserves_dtype`` is
    empty because the output is always ``uint32`` codes, and ``input_tags.allow_nan``
    holds only with ``missing="category"``. A check listed here has to fail
    (``xfail_strict``).
    """
    if isinstance(estimator, PrivateKD):
        return SELECTOR_FAILURES
    if isinstance(estimator, (KACSelector, KAnonymityGreedy, CMGreedy)):
        return BINARY_SELECTOR_FAILURES
    if isinstance(estimator, DILCA | DPDILCA):
        return DISTANCE_FAILURES
    if isinstance(estimator, (LaplaceDPRelease, ExponentialDPRelease)):
        return DP_RELEASE_FAILURES
    return {}


def _check_name(check) -> str:
    return getattr(check, "func", check).__name__


def _checks(estimators):
    params = []
    for template in estimators:
        for item in estimator_checks_generator(
            template,
            expected_failed_checks=expected_failed_checks(template),
            mark="xfail",
        ):
            # Expected failures come as pytest.param(..., marks=xfail), the rest as
            # (estimator, check) pairs.
            (estimator, check), marks = (
                (item.values, item.marks) if hasattr(item, "marks") else (item, ())
            )
            if _check_name(check) != "check_array_api_input":
                params.append(
                    pytest.param(
                        estimator,
                        check,
                        marks=marks,
                        id=f"{estimator!r}-{_check_name(check)}",
                    )
                )
    return params


# The checks fit on numeric arrays without declared bounds, so the encoder infers
# them and says so with a PrivacyLeakWarning, which filterwarnings=error would turn
# into a failure of every check. That warning is tested in test_table.py.
@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize(("estimator", "check"), _checks(ENCODERS))
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# The checks fit without cardinalities or classes, so PrivateKD infers them from the
# data and says so with a PrivacyLeakWarning (tested in test_discernibility.py and
# test_declared_classes.py).
@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize(("estimator", "check"), _checks(SELECTORS))
def test_sklearn_compatible_selector(estimator, check):
    check(estimator)


@pytest.mark.parametrize(("estimator", "check"), _checks(BINARY_SELECTORS))
def test_sklearn_compatible_binary_selector(estimator, check):
    check(estimator)


# Without cardinalities the codes' domains are inferred, with a PrivacyLeakWarning
# (tested in test_dilca.py).
@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize(("estimator", "check"), _checks(DISTANCES))
def test_sklearn_compatible_distance(estimator, check):
    check(estimator)


# The checks fit with labels of their own, so the DP estimators infer the label set and
# say so with a PrivacyLeakWarning (tested in test_declared_classes.py), as they do for
# cardinalities and bounds above.
@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize(("estimator", "check"), _checks(DP_RELEASES))
def test_sklearn_compatible_dp_release(estimator, check):
    check(estimator)


@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize(("estimator", "check"), _checks(DP_MODELS))
def test_sklearn_compatible_dp_model(estimator, check):
    check(estimator)


@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("estimator", [*ENCODERS, *SELECTORS, *DISTANCES], ids=repr)
def test_dataframe_column_names_consistency(estimator):
    # Not part of check_estimator's default list, but Pipelines rely on it.
    check_dataframe_column_names_consistency(type(estimator).__name__, estimator)


# DPFSDR and DPFS (paper 003) on the checks' real-valued data: seeded, with a declared
# data_norm; the label set is inferred (PrivacyLeakWarning, tested in test_dpfsdr.py) and
# the default (unlimited) accountant is charged.
CORRELATED_SELECTORS = [
    DPFSDR(1.0, 1.0, data_norm=10.0, random_state=0),
    DPFS(1.0, None, budget="total", data_norm=10.0, random_state=0),
]


@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
# Fits on the checks' small data warn that the released weights are noise.
@pytest.mark.filterwarnings("ignore:.*the released model is noise:UserWarning")
@pytest.mark.parametrize(("estimator", "check"), _checks(CORRELATED_SELECTORS))
def test_sklearn_compatible_correlated_selector(estimator, check):
    check(estimator)
