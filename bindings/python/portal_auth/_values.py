"""Immutable value types, lighter to import than dataclasses: the fields are a class's
`__slots__`, set once by its `__init__` (through `set_field`); instances compare equal when their
type and fields are, hash by their fields, and print and pickle as their constructor."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Sets a field of a value in its __init__, past the refusing __setattr__: one C call per
# field, where a keyword-argument helper costs a Python call and a dict on every result.
set_field = object.__setattr__


class Value:
    """The base of the package's value types: immutable, equal by value, built by keyword."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        """Refused: a value does not change."""
        raise AttributeError(f"{type(self).__name__} is immutable: {name} cannot be set")

    def __delattr__(self, name: str) -> None:
        """Refused: a value does not change."""
        raise AttributeError(f"{type(self).__name__} is immutable: {name} cannot be deleted")

    def __eq__(self, other: object) -> bool:
        """Equal when `other` is of the same type, with equal fields."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Value)
        return self._values() == other._values()

    def __hash__(self) -> int:
        """The hash of the fields (a TypeError when one is unhashable, such as a list)."""
        return hash((self.__class__, self._values()))

    def __repr__(self) -> str:
        """The constructor call that makes an equal value."""
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self._values()))
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied as the constructor called with the fields."""
        return self.__class__, self._values()
