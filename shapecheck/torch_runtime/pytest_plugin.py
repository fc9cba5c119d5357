"""pytest plugin: ``pytest --shapecheck-packages=pkg[,pkg]`` checks shapes in code under test.

Every function (and method of a class) defined in the named packages whose parameters carry
jaxtyping annotations of torch tensors is wrapped with :func:`shapecheck.check` as its module
is imported, so a test suite checks shapes without touching the code under test. Modules of
those packages that were imported before the plugin was configured (by a ``conftest.py``, say)
are instrumented in place.

The option can also be set in the ini file (``shapecheck_packages = pkg``). This module is
loaded for every pytest run once shapecheck is installed, so it imports neither torch nor the
runtime at import time: they load when the first matching module is imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Iterable, Optional

OPTION = "--shapecheck-packages"
INI = "shapecheck_packages"


def pytest_addoption(parser) -> None:
    """Register ``--shapecheck-packages`` and the ini key ``shapecheck_packages``."""
    group = parser.getgroup("shapecheck", "shape checks at run time")
    group.addoption(
        OPTION,
        action="store",
        dest="shapecheck_packages",
        default=None,
        metavar="PKG[,PKG]",
        help="apply shapecheck.check to every function with jaxtyping-annotated tensor "
        "parameters in these packages, as they are imported",
    )
    parser.addini(INI, "packages whose annotated functions shapecheck checks (comma separated)",
                  default="")


def packages_from(value: Optional[str]) -> list:
    """The package names in a comma (or whitespace) separated option value."""
    if not value:
        return []
    return [p.strip() for p in value.replace(",", " ").split() if p.strip()]


def pytest_configure(config) -> None:
    """Install the import hook for the packages named on the command line or in the ini."""
    value = config.getoption("shapecheck_packages", default=None) or config.getini(INI)
    packages = packages_from(value)
    if not packages:
        return
    for name in packages:
        if not all(part.isidentifier() for part in name.split(".")):
            import pytest

            raise pytest.UsageError(
                "%s: %r is not a package name (give dotted names separated by commas)" % (OPTION, name))
    finder = install(packages)
    config._shapecheck_finder = finder
    config.add_cleanup(lambda: uninstall(finder))


def pytest_report_header(config) -> Optional[str]:
    """Say which packages are checked."""
    finder = getattr(config, "_shapecheck_finder", None)
    if finder is None:
        return None
    return "shapecheck: checking shapes in " + ", ".join(finder.packages)


def never_imported(packages: Iterable[str]) -> list:
    """The packages of ``packages`` of which no module was imported in this process."""
    loaded = list(sys.modules)
    return [p for p in packages if not any(_matches(name, (p,)) for name in loaded)]


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Warn about a package named in ``--shapecheck-packages`` that no test imported: a typo
    there would otherwise check nothing, silently."""
    finder = getattr(config, "_shapecheck_finder", None)
    if finder is None:
        return
    for name in never_imported(finder.packages):
        terminalreporter.write_line(
            "shapecheck: warning: package %r (from %s) was never imported, so none of its "
            "functions were checked; is the name right?" % (name, OPTION),
            yellow=True,
        )


def _matches(fullname: str, packages: Iterable[str]) -> bool:
    return any(fullname == p or fullname.startswith(p + ".") for p in packages)


class ShapecheckFinder(importlib.abc.MetaPathFinder):
    """A meta path finder that hands matching modules to :class:`ShapecheckLoader`."""

    def __init__(self, packages: list) -> None:
        self.packages = list(packages)
        self.instrumented: list = []

    def find_spec(self, fullname, path, target=None):
        if not _matches(fullname, self.packages):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = ShapecheckLoader(spec.loader, self)
        return spec


class ShapecheckLoader(importlib.abc.Loader):
    """Wraps a module's own loader: runs it, then instruments the module."""

    def __init__(self, inner, finder: ShapecheckFinder) -> None:
        self._inner = inner
        self._finder = finder

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module) -> None:
        self._inner.exec_module(module)
        instrument_module(module)
        self._finder.instrumented.append(module.__name__)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def install(packages: list) -> ShapecheckFinder:
    """Put the finder first on ``sys.meta_path`` and instrument matching modules already loaded.

    A module loaded earlier may have re-exported a function of another (``from .layers import
    f`` in ``__init__``): such names are pointed at the checked function too.
    """
    finder = ShapecheckFinder(packages)
    sys.meta_path.insert(0, finder)
    loaded = [(n, m) for n, m in list(sys.modules.items()) if m is not None and _matches(n, packages)]
    replaced: dict = {}
    for name, module in loaded:
        before = dict(vars(module))
        instrument_module(module)
        finder.instrumented.append(name)
        for attr, value in vars(module).items():
            if before.get(attr) is not value and attr in before:
                replaced[id(before[attr])] = (before[attr], value)
    for _, module in loaded:
        for attr, value in list(vars(module).items()):
            hit = replaced.get(id(value))
            if hit is not None and hit[0] is value:
                setattr(module, attr, hit[1])
    return finder


def uninstall(finder: ShapecheckFinder) -> None:
    """Remove the finder from ``sys.meta_path``."""
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)


def instrument_module(module: types.ModuleType) -> int:
    """Wrap with ``check`` every function and method defined in ``module`` that has
    jaxtyping-annotated tensor parameters; returns how many were wrapped."""
    if getattr(module, "__shapecheck_instrumented__", False):
        return 0
    from shapecheck.torch_runtime.check import check, has_tensor_annotations

    count = 0
    name = module.__name__
    for attr, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType) and value.__module__ == name:
            wrapped = _wrap(value, check, has_tensor_annotations)
            if wrapped is not value:
                setattr(module, attr, wrapped)
                count += 1
        elif isinstance(value, type) and value.__module__ == name:
            count += _instrument_class(value, check, has_tensor_annotations)
    try:
        module.__shapecheck_instrumented__ = True  # type: ignore[attr-defined]  # a marker of our own
    except AttributeError:
        pass
    return count


def _instrument_class(cls: type, check, has_tensor_annotations) -> int:
    count = 0
    for attr, value in list(vars(cls).items()):
        func = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if not isinstance(func, types.FunctionType):
            continue
        wrapped = _wrap(func, check, has_tensor_annotations)
        if wrapped is func:
            continue
        if isinstance(value, (staticmethod, classmethod)):
            wrapped = type(value)(wrapped)
        try:
            setattr(cls, attr, wrapped)
        except (AttributeError, TypeError):
            continue
        count += 1
    return count


def _wrap(func, check, has_tensor_annotations):
    if getattr(func, "__shapecheck__", False):
        return func
    try:
        if not has_tensor_annotations(func):
            return func
        return check(func)
    except Exception as err:
        warnings.warn(
            "shapecheck: left %s.%s unchecked: %s" % (func.__module__, func.__qualname__, err),
            stacklevel=2,
        )
        return func
