"""A faster ``__init__`` for the frozen dataclasses the analysis makes by the thousand.

The ``__init__`` that :func:`dataclasses.dataclass` writes for a frozen class sets each field
with ``object.__setattr__``: for :class:`~shapecheck.semantic.facts.Fact` (23 fields) that made
building facts a tenth of the analysis. :func:`fill_directly` puts one in its place that fills the
instance's ``__dict__`` at once, with the same arguments, defaults and errors for unknown fields.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any, TypeVar

__all__ = ["fill_directly"]

C = TypeVar("C", bound=type)


def fill_directly(cls: C) -> C:
    """Give the frozen dataclass ``cls`` (every field with a plain default, no
    ``__post_init__``) an ``__init__`` that fills ``__dict__`` directly; returns ``cls``. Type
    checkers keep reading the signature the dataclass declares."""
    declared = fields(cls)
    if hasattr(cls, "__post_init__") or any(f.default is MISSING or not f.init for f in declared):
        raise TypeError(f"{cls.__name__}: every field needs a plain default, and no __post_init__")
    order = tuple(f.name for f in declared)
    defaults = {f.name: f.default for f in declared}
    count = len(order)
    name = cls.__name__

    def __init__(self: Any, *values: Any, **given: Any) -> None:
        state = self.__dict__
        state.update(defaults)
        if values:
            if len(values) > count:
                raise TypeError(f"{name} takes at most {count} values, got {len(values)}")
            state.update(zip(order, values))
        if given:
            state.update(given)
            if len(state) != count:
                raise TypeError(f"{name} has no field {sorted(given.keys() - defaults.keys())[0]!r}")

    __init__.__qualname__ = f"{name}.__init__"
    cls.__init__ = __init__  # type: ignore[misc]
    return cls
