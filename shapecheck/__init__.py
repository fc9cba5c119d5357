"""shapecheck: find PyTorch tensor bugs before the code runs, explain them when it does."""

from shapecheck.version import __version__ as __version__

# The runtime API imports torch, so it is loaded on first use: `import shapecheck` stays
# torch-free (the linter and the pytest plugin rely on that).
_RUNTIME_NAMES = frozenset({
    "einsum", "check", "assert_shape", "broadcast_shapes", "plan_source", "clear_cache",
    "current_bindings", "disabled", "UnresolvedAnnotationWarning",
})
_ERROR_NAMES = frozenset({
    "ShapeCheckError", "EinsumSyntaxError", "EinsumOperandCountError", "EinsumShapeError",
    "BroadcastError", "DeviceMismatchError", "DtypeMismatchError", "SignatureShapeError",
})


def __getattr__(name):
    """Load the runtime API (``einsum``, ``check``, ...) and the error classes on first use."""
    if name in _ERROR_NAMES:
        from shapecheck import errors

        value = getattr(errors, name)
        globals()[name] = value
        return value
    if name in _RUNTIME_NAMES:
        from shapecheck import runtime

        value = getattr(runtime, name)
        globals()[name] = value
        return value
    raise AttributeError("module 'shapecheck' has no attribute %r" % name)


def __dir__():
    """The module's names, the lazily loaded ones included."""
    return sorted(set(globals()) | _RUNTIME_NAMES | _ERROR_NAMES)
