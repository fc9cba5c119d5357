"""The rule catalog. Importing this package registers every rule module."""

from shapecheck.rules import layout  # noqa: F401
from shapecheck.rules import shapes  # noqa: F401
from shapecheck.rules import einsum  # noqa: F401
from shapecheck.rules import autograd  # noqa: F401
from shapecheck.rules import devices  # noqa: F401
from shapecheck.rules import pitfalls  # noqa: F401
