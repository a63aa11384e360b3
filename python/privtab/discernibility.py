"""Placeholder until the foundation work fills it in."""


def discernibility(*args, **kwargs):  # noqa: D103
    raise NotImplementedError
