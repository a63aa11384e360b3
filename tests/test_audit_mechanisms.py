"""Every randomized release of privtab passes its privacy audit, and the same audit
flags a deliberately broken variant of it.

Each case (tests/_audit_cases.py) runs the release on a neighbouring pair built to
stress it (privtab.audit.pairs) and bounds its ε from below at confidence 1 − 1e-6:
a correct release fails with probability at most 1e-6 per audit (about 3e-5 for the
suite), whatever the pair. The broken variant (ε tripled, or the sensitivity halved;
see each case) claims the original ε; the audit must find ``epsilon_lower > claimed``,
which shows that it has the power to catch a bug of that size.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

import privtab as pt

from _audit_cases import CONFIDENCE, all_cases, rank_shift_case

pytestmark = pytest.mark.slow

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_release_within_its_claim_and_broken_variant_flagged(case):
    correct = case.audit()
    assert correct.confidence == CONFIDENCE
    assert correct.passed, correct.verdict
    broken = case.audit(broken=True)
    assert not broken.passed, f"{case.broken}: {broken.verdict}"


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.guarantee == "ε-iDP"] + [rank_shift_case()],
    ids=lambda case: case.id,
)
def test_idp_pairs_keep_the_noise_scale_of_the_actual_data_set(case):
    # ε-individual DP compares the mechanism calibrated on the actual data set with its
    # output on a neighbour; the masker recalibrates on each input, so the audit is
    # faithful only when both sides get the same sensitivities.
    sides = [
        clone(case.build(False))
        .set_params(random_state=0, accountant=pt.BudgetAccountant())
        .fit(data)
        for data in case.pair
    ]
    for a, b in zip(sides[0].sensitivities_, sides[1].sensitivities_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_idp_cbls_rank_shift_exceeds_the_paper_claim_within_the_documented_bound():
    # The caveat in MicroaggregationMasker's Notes: moving the smallest record above
    # the largest shifts all n/k clusters, each centroid by its local sensitivity, so
    # the loss reaches (n/k)·ε on this pair (3ε here), beyond the paper's ε.
    case = rank_shift_case()
    result = case.audit()
    assert not result.passed, result.verdict
    assert result.epsilon_lower <= 3 * case.claimed
