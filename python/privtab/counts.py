"""Placeholder until the foundation work fills it in."""


def contingency_table(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def entropy(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def mutual_information(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def symmetric_uncertainty(*args, **kwargs):  # noqa: D103
    raise NotImplementedError
