"""The flow every differentially private release follows, in one place.

1. Validate ``epsilon`` and ``random_state``, and check that the accountant can afford
   ``epsilon``, before any data is read (:meth:`PrivateRun.start`).
2. Compute, drawing noise from ``run.random_state`` or ``run.seed()``.
3. After success, charge the accountant once, under the caller's ``label`` when one
   was given, and record the steps of the release in a ledger whose entries carry the
   kind of guarantee (:meth:`PrivateRun.spend`, :meth:`PrivateRun.ledger`). A failure after the first draw charges ``epsilon``
   too (:meth:`PrivateRun.charged_on_failure`); checks on public inputs come before
   it and cost nothing.

Functions use :class:`PrivateRun` directly; estimators inherit
:class:`DPEstimatorMixin`, whose ``_start_private_fit`` and ``_finish_private_fit``
also set ``epsilon_spent_`` and ``privacy_ledger_`` and the scikit-learn tags.
Selectors add :class:`SupportSelectorMixin`.

Core kernels called: none (the releases built on it call their own kernels).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from privtab._random import RandomState, check_random_state, core_seed
from privtab._validation import check_epsilon, check_ledger_label
from privtab.accountant import (
    BudgetAccountant,
    LedgerEntry,
    check_guarantee,
    resolve_accountant,
)

__all__ = ["DPEstimatorMixin", "PrivateRun", "SupportSelectorMixin"]


@dataclass(frozen=True)
class PrivateRun:
    """A randomized computation cleared to spend ``epsilon``.

    Attributes
    ----------
    epsilon : float
        The validated budget of the whole computation.
    random_state : numpy.random.Generator or None
        The generator to draw from; ``None`` for operating-system entropy, to be
        passed on as ``None`` so that the core seeds its noise from the OS directly.
    accountant : BudgetAccountant
        Checked already; charged by :meth:`spend`.
    guarantee : {"dp", "idp"}
        The kind of guarantee the computation gives (see
        :data:`privtab.accountant.GUARANTEES`).
    label : str or None
        The caller's label for the accountant's ledger entry; ``None`` for the
        release's own.
    """

    epsilon: float
    random_state: np.random.Generator | None
    accountant: BudgetAccountant
    guarantee: str = "dp"
    label: str | None = None
    #: The estimator's attributes when its fit started, put back if the fit is not
    #: charged (see :meth:`DPEstimatorMixin._finish_private_fit`).
    owner_state: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def start(
        cls,
        epsilon: Any,
        random_state: RandomState,
        accountant: BudgetAccountant | None,
        *,
        guarantee: str = "dp",
        name: str = "epsilon",
        label: Any = None,
    ) -> PrivateRun:
        """Validate the parameters and check the budget, before any data is read.

        Parameters
        ----------
        epsilon : float
            Finite and > 0; ``name`` in messages.
        random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        accountant : BudgetAccountant or None
            ``None`` for the process-wide default accountant.
        guarantee : {"dp", "idp"}, default="dp"
        name : str, default="epsilon"
        label : str, optional
            The caller's label for the ledger entry (the ``label`` parameter of every
            mechanism and DP estimator); ``None`` keeps the release's own.

        Raises
        ------
        BudgetExceededError
            If the accountant cannot afford ``epsilon``.
        TypeError, ValueError
            For an invalid ``epsilon``, ``random_state``, ``accountant``,
            ``guarantee`` or ``label``.
        """
        value = check_epsilon(epsilon, name)
        generator = None if random_state is None else check_random_state(random_state)
        caller_label = check_ledger_label(label)
        acc = resolve_accountant(accountant)
        acc.check(value)
        return cls(value, generator, acc, check_guarantee(guarantee), caller_label)

    def seed(self) -> int | None:
        """Draw a 64-bit seed for a Rust kernel (``None``: the kernel uses the OS)."""
        return core_seed(self.random_state)

    def ledger(self, steps: Iterable[tuple[str, float]]) -> list[LedgerEntry]:
        """Describe where ``epsilon`` went: one entry per ``(label, epsilon)`` step.

        Raises
        ------
        RuntimeError
            If the steps do not add up exactly to ``epsilon`` (a bug of the caller:
            use :func:`privtab.accountant.split_budget` to split it).
        """
        entries = [
            LedgerEntry(str(label), float(eps), guarantee=self.guarantee)
            for label, eps in steps
        ]
        total = sum(entry.epsilon for entry in entries)
        if total != self.epsilon:
            raise RuntimeError(
                f"the ledger adds up to {total!r}, not to the epsilon spent "
                f"{self.epsilon!r}"
            )
        return entries

    def entry_label(self, default: str) -> str:
        """Return the label of the ledger entry: the caller's, else ``default``."""
        return default if self.label is None else self.label

    def spend(self, label: str) -> None:
        """Charge ``epsilon`` to the accountant, once, after success.

        The entry carries the caller's label when one was given, else ``label``.
        """
        self.accountant.spend(
            self.epsilon, label=self.entry_label(label), guarantee=self.guarantee
        )

    @contextlib.contextmanager
    def charged_on_failure(
        self, label: str, drawn: Callable[[], float] | None = None
    ) -> Iterator[None]:
        """Charge ``epsilon`` when the block raises, then let the error propagate.

        For the part of a release that runs from its first draw on: a failure there
        can depend on the data and on the noise, and a caller could retry a refusal
        that costs nothing until the draws before it told them what they wanted.
        Every check on public inputs alone belongs before the block, where refusing
        costs nothing. ``drawn``, for a release whose steps are drawn one by one,
        returns the budget of the steps drawn so far (at most ``epsilon``), which is
        then charged instead of the whole ``epsilon``.
        """
        try:
            yield
        except Exception:
            amount = self.epsilon if drawn is None else min(drawn(), self.epsilon)
            if amount > 0:
                self.accountant.spend(
                    amount,
                    label=f"{self.entry_label(label)} (failed after drawing noise)",
                    guarantee=self.guarantee,
                )
            raise


class DPEstimatorMixin:
    """Start-up and bookkeeping of a differentially private estimator.

    The estimator takes ``epsilon``, ``random_state``, ``accountant`` and ``label``
    parameters; its ``fit`` validates its own parameters, then::

        run = self._start_private_fit()  # epsilon, seed, budget: before the data
        ...  # read the data, compute with run.random_state or run.seed()
        self._finish_private_fit(run, "label for the accountant", steps)

    which charges the accountant (under ``self.label`` when it is set) and sets
    ``epsilon_spent_`` and ``privacy_ledger_`` (``steps``, the ``(label, epsilon)``
    parts of the release, default one step under the accountant's label).
    ``privacy_guarantee`` (a class attribute, or a property where a parameter decides
    it, so that the public attribute always says what the ledger records) tags every
    ledger entry; ``_total_epsilon()`` is the budget to validate and spend.
    The scikit-learn tag ``non_deterministic`` is set unless a seed is fixed.

    :meth:`release` is the publishable form of the fitted estimator: the fitted
    attributes the guarantee covers (``released_attributes``, a dotted name such as
    ``"classifier_.coef_"`` reaching into a fitted sub-estimator), the public
    parameters and this fit's ledger. The estimator itself is not: it keeps what
    the fit computed without noise for analysis, its ``random_state`` (which
    regenerates the noise) and the ``accountant`` passed to it, whose ledger lists
    every release charged to it. ``pickle`` carries all of them; it stays the way to
    save or ship an estimator among the analyst's own processes (the accountant goes
    with it, so a refit is still charged to the caller's budget), not a way to
    publish one.
    """

    #: The kind of guarantee of the release, ``"dp"`` or ``"idp"``.
    privacy_guarantee: ClassVar[str] = "dp"

    #: The fitted attributes the guarantee covers, in the order :meth:`release`
    #: returns them; ``"a_.b_"`` names attribute ``b_`` of the fitted ``a_``. Every
    #: other fitted attribute (and the ``accountant`` parameter, with its whole
    #: ledger) is for the analyst only: see SECURITY.md, "Publishing a fitted
    #: estimator".
    released_attributes: ClassVar[tuple[str, ...]] = ()

    #: Constructor parameters left out of :meth:`release`: the accountant's ledger
    #: records every other release of the caller, and a seed regenerates the noise.
    _unpublished_params: ClassVar[tuple[str, ...]] = (
        "accountant",
        "random_state",
        "n_threads",
        "n_jobs",
    )

    epsilon: Any
    random_state: RandomState
    accountant: BudgetAccountant | None

    #: The caller's label of the accountant's ledger entry: every privtab estimator
    #: takes it as the constructor parameter ``label``; ``None`` for an estimator
    #: that does not.
    label: str | None = None

    def _total_epsilon(self) -> float:
        return check_epsilon(self.epsilon)

    def _start_private_fit(self) -> PrivateRun:
        run = PrivateRun.start(
            self._total_epsilon(),
            self.random_state,
            self.accountant,
            guarantee=self.privacy_guarantee,
            label=self.label,
        )
        return replace(run, owner_state=dict(vars(self)))

    def _finish_private_fit(
        self,
        run: PrivateRun,
        label: str,
        steps: Iterable[tuple[str, float]] | None = None,
    ) -> None:
        ledger = run.ledger(
            [(run.entry_label(label), run.epsilon)] if steps is None else steps
        )
        try:
            run.spend(label)
        except BaseException:
            # A budget shared with other processes can be spent between the check at
            # the start and this charge: the refused release must not stay readable
            # on the estimator, so it goes back to its state before the fit.
            if run.owner_state is not None:
                vars(self).clear()
                vars(self).update(run.owner_state)
            raise
        self.epsilon_spent_ = run.epsilon
        self.privacy_ledger_ = ledger

    def release(self) -> dict[str, Any]:
        """Return the publishable form of the fitted estimator: covered values only.

        A fitted estimator holds more than its release: values computed from the data
        without noise (a training accuracy, per-cluster sensitivities, an inferred
        norm), kept for analysis, its seed, and the ``accountant`` passed to it, whose
        ledger lists every other release of the caller. Pickling or publishing the estimator
        publishes all of them; publish this instead.

        Returns
        -------
        dict
            ``"estimator"`` (the class name), ``"params"`` (the public
            hyperparameters: every constructor parameter but the accountant, the seed
            and thread counts), ``"guarantee"`` (``"dp"`` or ``"idp"``),
            ``"epsilon_spent"``, ``"privacy_ledger"`` (this fit's ``(label,
            epsilon)`` steps) and ``"attributes"``: a copy of each fitted attribute
            the guarantee covers (``released_attributes``), by name.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator has not been fitted.
        TypeError
            If a released attribute holds an estimator or an accountant (whose own
            attributes the guarantee does not cover): release its covered
            attributes by dotted name instead.

        Notes
        -----
        The guarantee covers these values under the assumptions of SECURITY.md: a
        domain, label set or bound taken from the data at fit (the fit warned with
        :class:`~privtab.exceptions.PrivacyLeakWarning`) is not covered, and shows
        through the released values (``classes_``, the shapes, the scale).
        """
        check_is_fitted(self, "epsilon_spent_")
        params = {
            name: _published_copy(value, name)
            for name, value in self.get_params(deep=False).items()  # type: ignore[attr-defined]
            if name not in self._unpublished_params
        }
        return {
            "estimator": type(self).__name__,
            "params": params,
            "guarantee": self.privacy_guarantee,
            "epsilon_spent": self.epsilon_spent_,
            "privacy_ledger": [
                (entry.label, entry.epsilon) for entry in self.privacy_ledger_
            ],
            "attributes": {
                name: _published_copy(self._released_value(name), name)
                for name in self.released_attributes
            },
        }

    def _released_value(self, name: str) -> Any:
        value: Any = self
        for part in name.split("."):
            value = getattr(value, part)
        return value

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        # A fixed seed makes fits reproducible, for any number of threads.
        tags.non_deterministic = self.random_state is None
        return tags


def _published_copy(value: Any, name: str) -> Any:
    """Copy a fitted value so that no later change of the estimator reaches it.

    An estimator or an accountant is refused: it carries values the guarantee does
    not cover (its own fitted attributes, parameters or ledger).
    """
    if isinstance(value, BaseEstimator | BudgetAccountant):
        raise TypeError(
            f"{name} holds a {type(value).__name__}, which is not publishable as a "
            "whole; name its covered attributes instead (e.g. "
            f"'{name}.coef_')"
        )
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_published_copy(item, name) for item in value]
    if isinstance(value, tuple):
        return tuple(_published_copy(item, name) for item in value)
    if isinstance(value, dict):
        return {key: _published_copy(item, name) for key, item in value.items()}
    return copy.deepcopy(value)


class SupportSelectorMixin(SelectorMixin):
    """A supervised feature selector whose ``fit`` sets ``support_``.

    ``_set_selection(order, n_features)`` stores ``selection_order_`` and the mask
    ``support_`` that ``get_support``, ``transform`` and ``get_feature_names_out``
    read; the tags say that ``y`` is required.
    """

    support_: np.ndarray
    selection_order_: np.ndarray

    def _set_selection(self, order: Any, n_features: int) -> None:
        self.selection_order_ = np.asarray(order, dtype=np.int64)
        support = np.zeros(n_features, dtype=bool)
        support[self.selection_order_] = True
        self.support_ = support

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
