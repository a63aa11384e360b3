"""Placeholder until the foundation work fills it in."""


def mixed_radix_decode(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def mixed_radix_encode(*args, **kwargs):  # noqa: D103
    raise NotImplementedError
