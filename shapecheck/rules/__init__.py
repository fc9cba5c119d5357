"""The rule catalog. Importing this package registers every rule module."""

from shapecheck.rules import layout  # noqa: F401
