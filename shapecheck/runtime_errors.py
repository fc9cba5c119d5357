"""The error classes the runtime raises beyond the algebra's.

They live in :mod:`shapecheck.errors` once the algebra provides them (see the request in
notes/CONTRACTS.md); this module re-exports them from there, and defines them here only while
that module lacks them, with the same bases and constructor.
"""

from __future__ import annotations

from shapecheck import errors as _errors
from shapecheck.errors import ShapeCheckError

if hasattr(_errors, "SignatureShapeError"):
    SignatureShapeError = _errors.SignatureShapeError
else:

    class SignatureShapeError(ShapeCheckError, RuntimeError):  # type: ignore[no-redef]
        """A value that does not fit its jaxtyping annotation in a ``@check``ed call, or a
        tensor that fails ``assert_shape``."""


if hasattr(_errors, "DtypeMismatchError"):
    DtypeMismatchError = _errors.DtypeMismatchError
else:

    class DtypeMismatchError(ShapeCheckError, RuntimeError, TypeError):  # type: ignore[no-redef]
        """Operands whose dtypes do not fit together, or a dtype that is not of the annotated
        kind (``Float[...]`` given an integer tensor)."""
