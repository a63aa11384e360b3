"""Placeholder until the foundation work fills it in."""


def EncodedTable(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def TableEncoder(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def lei_bandwidth(*args, **kwargs):  # noqa: D103
    raise NotImplementedError


def lei_bins(*args, **kwargs):  # noqa: D103
    raise NotImplementedError
