"""Placeholder until the foundation work fills it in."""


def discrete_laplace_mechanism(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def exponential_mechanism(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def laplace_mechanism(*args, **kwargs):  # noqa: D103
    raise NotImplementedError
