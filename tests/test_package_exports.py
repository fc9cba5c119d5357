"""Every name the runtime exports is reachable from the package itself."""

import shapecheck
from shapecheck import runtime


def test_every_runtime_export_is_a_package_attribute():
    for name in runtime.__all__:
        assert getattr(shapecheck, name) is getattr(runtime, name), name


def test_package_lists_exactly_the_runtime_exports():
    assert set(runtime.__all__) == set(shapecheck._RUNTIME_NAMES) | set(shapecheck._ERROR_NAMES)
