"""A small package with jaxtyping-annotated functions, for the pytest plugin's tests.

It never imports shapecheck: ``pytest --shapecheck-packages=runtime_pkg`` checks it from outside.
``scale_channels`` is re-exported here, as packages often do, so the re-exported name must be
checked too.
"""

from runtime_pkg.layers import scale_channels

__all__ = ["scale_channels"]
