"""scikit-learn's estimator checks on the encoder, in the configurations users meet."""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import (
    check_dataframe_column_names_consistency,
    parametrize_with_checks,
)

from privtab import TableEncoder

ENCODERS = [
    TableEncoder(),
    TableEncoder(missing="category"),
    TableEncoder(bins=3, out_of_bounds="clip"),
]


def expected_failed_checks(estimator: TableEncoder) -> dict[str, str]:
    """Checks an encoder is known to fail, with the reason: none at present.

    Checks whose premise does not apply are answered by tags instead:
    ``transformer_tags.preserves_dtype`` is empty because the output is always
    ``uint32`` codes, and ``input_tags.allow_nan`` holds only with
    ``missing="category"``.
    """
    return {}


# The checks fit on numeric arrays without declared bounds, so the encoder infers
# them and says so with a PrivacyLeakWarning, which filterwarnings=error would turn
# into a failure of every check. That warning is tested in test_table.py.
@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
@parametrize_with_checks(ENCODERS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.filterwarnings("ignore::privtab.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("estimator", ENCODERS, ids=repr)
def test_dataframe_column_names_consistency(estimator):
    # Not part of check_estimator's default list, but Pipelines rely on it.
    check_dataframe_column_names_consistency(type(estimator).__name__, estimator)
