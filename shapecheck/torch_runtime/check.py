"""``@shapecheck.check`` and ``shapecheck.assert_shape``.

``check`` reads a function's jaxtyping annotations once and compiles a wrapper whose body is the
exact sequence of comparisons those annotations need (generated Python, so a call costs a few
attribute reads and dict operations per tensor). Named dims are bound across the arguments and
the return value; variadic ``*batch``, ``...``, broadcastable ``#b``, fixed sizes and symbolic
expressions (``dim+1``) follow jaxtyping's meaning. All tensor arguments must sit on one device
(a 0-d CPU tensor excepted, as torch allows) unless ``devices=False``. Annotations that are not
tensor annotations are left to beartype. When the fast path finds a fault, the reference
interpreter (:mod:`shapecheck.torch_runtime.explain`) walks the call again to explain it.

``SHAPECHECK_DISABLE=1`` in the environment, when ``check`` runs, makes it return the function
unchanged.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import sys
import types
import typing
import warnings
from typing import Any, Callable, Optional

import torch

from shapecheck.torch_runtime.annotations import (
    ANONYMOUS, FIXED, SYMBOLIC, VARIADIC, TensorSpec, dims_spec, eval_symbolic,
    is_array_annotation, tensor_spec, tuple_specs,
)
from shapecheck.torch_runtime.explain import Binder, Fault, merge_variadic

_MISSING = object()
_CPU = torch.device("cpu")
_NO_RESULT = object()
_CONTEXT: contextvars.ContextVar = contextvars.ContextVar("shapecheck_call", default=None)


class UnresolvedAnnotationWarning(UserWarning):
    """``@check`` could not resolve some annotations of a function (a name imported only under
    ``if TYPE_CHECKING:`` with postponed annotations, a typo): those are not checked. Issued
    once per function, at its first call, pointing at its definition."""


def _enter(context: tuple):
    """Make ``context`` the current checked call (what ``assert_shape`` in the body sees)."""
    return _CONTEXT.set(context)


def _leave(token) -> None:
    _CONTEXT.reset(token)


def _traced_enter(context: tuple) -> None:
    return None


def _traced_leave(token) -> None:
    return None


# torch.compile (dynamo) traces a function's replacement named by ``_torchdynamo_inline`` in
# place of the function: while it traces a checked call, the checks themselves are traced (they
# run at trace time on the traced shapes) but the call's context, which it cannot trace, is not
# kept, so ``assert_shape`` is not checked there. Eager calls are unaffected.
_enter._torchdynamo_inline = _traced_enter  # type: ignore[attr-defined]
_leave._torchdynamo_inline = _traced_leave  # type: ignore[attr-defined]


def disabled() -> bool:
    """True when ``SHAPECHECK_DISABLE`` is set to anything but ``""``, ``0``, ``false``,
    ``no`` or ``off``. Reads the environment now, and so also refreshes the setting that
    :func:`assert_shape` keeps (read at import and by every :func:`check` and call of this)."""
    global _ASSERTS_OFF
    value = os.environ.get("SHAPECHECK_DISABLE", "")
    _ASSERTS_OFF = value.strip().lower() not in ("", "0", "false", "no", "off")
    return _ASSERTS_OFF


_ASSERTS_OFF = False
disabled()


def check(fn: Optional[Callable] = None, *, devices: bool = True):
    """Check a function's jaxtyping-annotated tensors on every call.

    Use bare (``@check``) or with options (``@check(devices=False)``). Each call binds the named
    dims across the arguments and the return value and checks dtype kinds, ranks, fixed sizes,
    ``*batch``/``...``, ``#b`` and symbolic dims; with ``devices=True`` all tensor arguments
    must be on one device. Faults raise
    :class:`~shapecheck.errors.SignatureShapeError` (a ``RuntimeError``),
    :class:`~shapecheck.errors.DtypeMismatchError` or
    :class:`~shapecheck.errors.DeviceMismatchError`; a non-tensor where a tensor is annotated
    raises ``TypeError``. Other annotations are checked by beartype. With
    ``SHAPECHECK_DISABLE=1`` the function is returned unchanged.
    """
    if fn is None:
        return functools.partial(check, devices=devices)
    if disabled():
        return fn
    if isinstance(fn, (staticmethod, classmethod)):
        return type(fn)(check(fn.__func__, devices=devices))
    if not isinstance(fn, types.FunctionType):
        raise TypeError(
            "shapecheck.check() decorates functions and methods, not %s" % type(fn).__name__)
    if getattr(fn, "__shapecheck__", False):
        return fn
    return compile_checker(fn, devices=devices)


def _resolve_hints(fn: Callable) -> tuple:
    """``(hints, unresolved)``: the function's annotations as objects, and for each one that
    cannot be resolved ``(name, why)`` (it is left out of ``hints``)."""
    try:
        return typing.get_type_hints(fn, include_extras=True), []
    except Exception:
        pass
    hints = {}
    unresolved = []
    for name, hint in getattr(fn, "__annotations__", {}).items():
        if isinstance(hint, str):
            try:
                hint = eval(hint, fn.__globals__, {})
            except Exception as err:
                unresolved.append((name, "%s: %s" % (type(err).__name__, err)))
                continue
        hints[name] = hint
    return hints, unresolved


def has_tensor_annotations(fn: Callable) -> bool:
    """True when a parameter of ``fn`` carries a jaxtyping annotation of torch tensors."""
    hints = _resolve_hints(fn)[0]
    return any(tensor_spec(h) is not None for name, h in hints.items() if name != "return")


class _Param:
    """A checked parameter: how to fetch its value from ``(args, kwargs)`` and its spec."""

    __slots__ = ("name", "kind", "index", "spec")

    def __init__(self, name: str, kind: Any, index: int, spec: TensorSpec) -> None:
        self.name = name
        self.kind = kind
        self.index = index
        self.spec = spec


class Checker:
    """A compiled check of one function: its parameters, return spec and explainer."""

    def __init__(self, fn: Callable, params: list, returns: Optional[list], returns_tuple: bool,
                 devices: bool, named: frozenset) -> None:
        self.fn = fn
        self.params = params
        self.returns = returns
        self.returns_tuple = returns_tuple
        self.devices = devices
        self.named = named
        self.function = getattr(fn, "__qualname__", getattr(fn, "__name__", "function")) + "()"
        code = getattr(fn, "__code__", None)
        self.location = "%s:%d" % (code.co_filename, code.co_firstlineno) if code else ""

    def values(self, args: tuple, kwargs: dict):
        """``(where, spec, value)`` for every checked argument present in the call, in order."""
        n = len(args)
        for p in self.params:
            kind = p.kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                for k, value in enumerate(args[p.index:]):
                    yield "argument '%s[%d]'" % (p.name, k), p.spec, value
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                for key, value in kwargs.items():
                    if key not in self.named:
                        yield "argument '%s'" % key, p.spec, value
                continue
            if kind is inspect.Parameter.KEYWORD_ONLY:
                value = kwargs.get(p.name, _MISSING)
            elif p.index < n:
                value = args[p.index]
            elif kind is inspect.Parameter.POSITIONAL_ONLY:
                value = _MISSING
            else:
                value = kwargs.get(p.name, _MISSING)
            if value is not _MISSING:
                yield "argument '%s'" % p.name, p.spec, value

    def result_values(self, result: Any):
        """``(where, spec, value)`` for the return value (each item of an annotated tuple)."""
        if self.returns is None:
            return
        if not self.returns_tuple:
            yield "return value", self.returns[0], result
            return
        if not isinstance(result, tuple) or len(result) != len(self.returns):
            yield "return value", None, result
            return
        for k, (spec, value) in enumerate(zip(self.returns, result)):
            yield "return value [%d]" % k, spec, value

    def bind(self, args: tuple, kwargs: dict, result: Any = _NO_RESULT,
             bindings: Optional[dict] = None) -> Binder:
        """Walk the call with the reference interpreter; raises the first fault's error.

        ``bindings`` is the call's live bindings dict: the dims ``assert_shape`` bound in the
        body (recorded there with their source) join before the return value is checked.
        """
        __tracebackhide__ = True  # pytest shows the caller's frame, not these
        binder = Binder(self.function, self.location, self.devices)
        try:
            for where, spec, value in self.values(args, kwargs):
                binder.check_value(where, spec, value)
            binder.check_pending()
            if bindings:
                adopt_asserted(binder, bindings)
            if result is not _NO_RESULT:
                binder.devices = False
                for where, spec, value in self.result_values(result):
                    if spec is None:
                        raise Fault(TypeError(
                            "%s: return value is %s, expected a tuple of %d tensors"
                            % (self.function, type(value).__name__, len(self.returns or ()))))
                    binder.check_value(where, spec, value)
                binder.check_pending()
        except Fault as fault:
            raise fault.error.with_traceback(None) from None
        return binder

    def fail(self, args: tuple, kwargs: dict, result: Any = _NO_RESULT,
             bindings: Optional[dict] = None) -> None:
        """Called by the compiled wrapper on a fault: raise the explained error."""
        __tracebackhide__ = True
        self.bind(args, kwargs, result, bindings)
        raise AssertionError(
            "shapecheck: the compiled check of %s rejected a call its explainer accepts; "
            "please report this" % self.function)


def adopt_asserted(binder: Binder, bindings: dict) -> None:
    """Copy into ``binder`` the dims that ``assert_shape`` bound in ``bindings``, with sources."""
    for key, source in bindings.items():
        if isinstance(key, tuple) and key[0] == "src":
            name = key[1]
            if name not in binder.values and name in bindings:
                binder.values[name] = bindings[name]
                binder.sources[name] = source
                flag = ("#", name)
                if flag in bindings:
                    binder.values[flag] = bindings[flag]


class _Source:
    """Builds the source of the compiled wrapper."""

    def __init__(self) -> None:
        self.lines: list = []
        self.consts: dict = {}
        self.symbols: list = []
        self.broadcast_names: frozenset = frozenset()
        self.in_loop = False
        # the names the lines emitted so far may have bound, where ``b`` starts empty: the
        # first sight of a name is then a plain store (a setdefault and a compare cost about
        # 0.1 us more a dim); ``None`` where ``b`` may hold anything (every dim compares)
        self.seen: Optional[set] = None

    def const(self, value: Any) -> str:
        name = "_k%d" % len(self.consts)
        self.consts[name] = value
        return name

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def tensor(self, indent: int, var: str, spec: TensorSpec, devices: bool, fail: str) -> None:
        """Lines checking the tensor in ``var`` against ``spec``; ``fail`` is the fault call."""
        self.emit(indent, "if not isinstance(%s, %s): %s" % (var, self.const(spec.array_type), fail))
        if spec.dtypes is not None:
            self.emit(indent, "if %s.dtype not in %s: %s" % (var, self.const(spec.dtypes), fail))
        self.emit(indent, "s = %s.shape" % var)
        if spec.variadic is None:
            self.emit(indent, "if len(s) != %d: %s" % (len(spec.dims), fail))
        elif spec.min_rank:
            self.emit(indent, "if len(s) < %d: %s" % (spec.min_rank, fail))
        for i, dim in enumerate(spec.prefix):
            self.dim(indent, "s[%d]" % i, dim, fail)
        suffix = spec.suffix
        for j, dim in enumerate(suffix):
            self.dim(indent, "s[%d]" % (j - len(suffix)), dim, fail)
        if spec.variadic is not None:
            dim = spec.dims[spec.variadic]
            if dim.name:
                end = "len(s) - %d" % len(suffix) if suffix else ""
                self.emit(indent, "w = s[%d:%s]" % (spec.variadic, end))
                key = repr("*" + dim.name)
                if dim.broadcastable or self.broadcast_variadic(dim.name):
                    self.emit(indent, "if _merge(b, %s, w, %s): %s" % (key, dim.broadcastable, fail))
                else:
                    self.emit(indent, "if b.setdefault(%s, w) != w: %s" % (key, fail))
        if devices:
            # ``Tensor.device`` builds a new device object and comparing two costs about
            # 0.2 us a tensor (torch 2.13, measured); a CPU tensor shares one constant
            self.emit(indent, "d = _CPU if %s.is_cpu else %s.device" % (var, var))
            if spec.may_be_scalar():
                self.emit(indent, "if len(s) or d.type != 'cpu':")
                indent += 1
            self.emit(indent, "if dev is None: dev = d")
            self.emit(indent, "elif d is not dev and d != dev: %s" % fail)

    def broadcast_variadic(self, name: str) -> bool:
        return name in self.broadcast_names

    def dim(self, indent: int, expr: str, dim, fail: str) -> None:
        if dim.kind == ANONYMOUS:
            return
        if dim.kind == FIXED:
            if dim.broadcastable:
                self.emit(indent, "d = %s" % expr)
                self.emit(indent, "if d != 1 and d != %d: %s" % (dim.size, fail))
            else:
                self.emit(indent, "if %s != %d: %s" % (expr, dim.size, fail))
            return
        if dim.kind == SYMBOLIC:
            var = "y%d" % len(self.symbols)
            if self.in_loop:
                self.symbols.append((var, dim, True))
                self.emit(indent, "%s.append(%s)" % (var, expr))
            else:
                self.symbols.append((var, dim, False))
                self.emit(indent, "%s = %s" % (var, expr))
            return
        first = self.seen is not None and dim.name not in self.seen
        if self.seen is not None:
            self.seen.add(dim.name)
        if first and not dim.broadcastable and not self.in_loop:
            self.emit(indent, "b[%r] = %s" % (dim.name, expr))
            return
        self.emit(indent, "d = %s" % expr)
        if dim.broadcastable:
            self.emit(indent, "if d != 1 and b.setdefault(%r, d) != d: %s" % (dim.name, fail))
        else:
            self.emit(indent, "if b.setdefault(%r, d) != d: %s" % (dim.name, fail))

    def symbol_inits(self) -> list:
        """Lines that set up the variables the symbolic dims are collected in."""
        return ["    %s = %s" % (var, "[]" if listed else "None") for var, _, listed in self.symbols]

    def flush_symbols(self, indent: int, fail: str) -> None:
        """Lines checking the symbolic dims collected so far against the bound names."""
        for var, dim, listed in self.symbols:
            size = var
            if listed:
                self.emit(indent, "for y in %s:" % var)
                size = "y"
            test = "%s is not None and _sym(%s, b, %s)" % (size, self.const(dim), size)
            if dim.broadcastable:
                test = "%s is not None and %s != 1 and _sym(%s, b, %s)" % (
                    size, size, self.const(dim), size)
            self.emit(indent + (1 if listed else 0), "if %s: %s" % (test, fail))
        self.symbols = []


def _kind(fn: Callable) -> str:
    """``"coroutine"``, ``"generator"``, ``"asyncgen"`` or ``"plain"``."""
    if inspect.iscoroutinefunction(fn):
        return "coroutine"
    if inspect.isasyncgenfunction(fn):
        return "asyncgen"
    if inspect.isgeneratorfunction(fn):
        return "generator"
    return "plain"


class _Parts:
    """A compiled check split at the call: ``pre(args, kwargs) -> bindings`` checks the
    arguments, ``post(result, bindings, args, kwargs) -> result`` the return value, ``target``
    is what is called (``fn``, or its beartype twin), ``checker`` explains faults."""

    __slots__ = ("checker", "pre", "post", "target", "wrapper")

    def __init__(self, checker, pre, post, target, wrapper=None) -> None:
        self.checker = checker
        self.pre = pre
        self.post = post
        self.target = target
        self.wrapper = wrapper


def _analyse(fn: Callable, devices: bool, hints: dict, kind: str):
    """Read ``hints`` into ``(checker or None, target)``; ``None`` when nothing is checked
    beyond what beartype does in ``target``."""
    sig = inspect.signature(fn)
    params = []
    other_hints = {}
    named = set()
    for index, (name, param) in enumerate(sig.parameters.items()):
        if param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            named.add(name)
        hint = hints.get(name, _MISSING)
        if hint is _MISSING:
            continue
        spec = tensor_spec(hint)
        if spec is None:
            other_hints[name] = hint
            continue
        params.append(_Param(name, param.kind, index, spec))
    returns = None
    returns_tuple = False
    # a coroutine's annotation is the awaited value's; a generator's is not a tensor's
    value_return = kind in ("plain", "coroutine")
    if "return" in hints:
        spec = tensor_spec(hints["return"])
        if spec is not None and value_return:
            returns = [spec]
        else:
            items = tuple_specs(hints["return"]) if value_return else None
            if items is not None:
                returns, returns_tuple = items, True
            else:
                other_hints["return"] = hints["return"]
    target = _beartyped(fn, other_hints) if other_hints else fn
    if not params and returns is None:
        return None, target
    return Checker(fn, params, returns, returns_tuple, devices, frozenset(named)), target


def compile_checker(fn: Callable, devices: bool = True) -> Callable:
    """Read ``fn``'s annotations and build its checking wrapper (see :func:`check`).

    Coroutine functions, generator functions and async generator functions get a wrapper of
    their own kind whose body runs with the call's bindings (``assert_shape`` sees them); a
    coroutine's awaited value is checked against the return annotation. Annotations that do not
    resolve yet are tried again at the first call, then warned about
    (:class:`UnresolvedAnnotationWarning`) and left out."""
    kind = _kind(fn)
    hints, unresolved = _resolve_hints(fn)
    if unresolved:
        return _deferred(fn, devices, kind)
    checker, target = _analyse(fn, devices, hints, kind)
    if checker is None:
        return target
    parts = _compile_parts(fn, checker, target, kind)
    return _finish(_kind_wrapper(kind, lambda: parts) if kind != "plain" else parts.wrapper, fn,
                   checker)


def _finish(wrapper: Callable, fn: Callable, checker: Optional["Checker"]) -> Callable:
    functools.update_wrapper(wrapper, fn)
    # function attributes: mypy gives a Callable no __dict__
    wrapper.__shapecheck__ = True  # type: ignore[attr-defined]
    wrapper.__shapecheck_checker__ = checker  # type: ignore[attr-defined]
    return wrapper


def _compile_parts(fn: Callable, checker: Optional["Checker"], target: Callable, kind: str) -> _Parts:
    """The compiled parts of a check (a pass-through when there is nothing to check)."""
    if checker is None:
        checker = Checker(fn, [], None, False, False, frozenset())
    return _generate(checker, target, kind == "plain")


def _deferred(fn: Callable, devices: bool, kind: str) -> Callable:
    """A wrapper that resolves the annotations at the first call (names defined after the
    function may exist by then), warns once about those that still do not resolve, and checks
    the rest from then on."""
    state: list = []

    def parts() -> _Parts:
        if not state:
            hints, unresolved = _resolve_hints(fn)
            if unresolved:
                _warn_unresolved(fn, unresolved)
            checker, target = _analyse(fn, devices, hints, kind)
            compiled = _compile_parts(fn, checker, target, kind)
            wrapper.__shapecheck_checker__ = checker  # type: ignore[attr-defined]  # a function attribute
            state.append(compiled)
        return state[0]

    if kind == "plain":
        def wrapper(*args, **kwargs):
            __tracebackhide__ = True
            return (state[0] if state else parts()).wrapper(*args, **kwargs)

        def traced(*args, **kwargs):  # what torch.compile traces: resolving cannot be traced
            return state[0].wrapper(*args, **kwargs) if state else fn(*args, **kwargs)

        wrapper._torchdynamo_inline = traced  # type: ignore[attr-defined]  # a function attribute
    else:
        wrapper = _kind_wrapper(kind, parts)
    return _finish(wrapper, fn, None)


def _warn_unresolved(fn: Callable, unresolved: list) -> None:
    """One :class:`UnresolvedAnnotationWarning` naming the function and what is not checked."""
    names = ", ".join("return value" if n == "return" else "'%s'" % n for n, _ in unresolved)
    code = getattr(fn, "__code__", None)
    message = (
        "shapecheck.check: %s() has annotations that cannot be resolved (%s), so %s %s not "
        "checked; a name imported only under 'if TYPE_CHECKING:' does not exist at run time: "
        "import it normally" % (
            fn.__qualname__, unresolved[0][1], names, "is" if len(unresolved) == 1 else "are"))
    warnings.warn_explicit(
        message, UnresolvedAnnotationWarning,
        code.co_filename if code else "<unknown>", code.co_firstlineno if code else 0,
        module=getattr(fn, "__module__", None) or "<unknown>",
    )


def _kind_wrapper(kind: str, parts: Callable) -> Callable:
    """The wrapper of a coroutine, generator or async generator function: checks the arguments
    when called (as for a plain function), then returns the coroutine or generator with every
    step of the body run with the call's bindings current; a coroutine's result is checked when
    it is awaited. ``parts()`` gives the compiled :class:`_Parts`."""
    if kind == "coroutine":
        def wrapper(*args, **kwargs):
            __tracebackhide__ = True
            p = parts()
            return _awaited(p, p.pre(args, kwargs), args, kwargs)
        mark = getattr(inspect, "markcoroutinefunction", None)  # Python 3.12+
        return mark(wrapper) if mark is not None else wrapper
    drive = _drive if kind == "generator" else _drive_async

    def generator_wrapper(*args, **kwargs):
        __tracebackhide__ = True
        p = parts()
        context = (p.pre(args, kwargs), p.checker, args, kwargs)
        return drive(p.target(*args, **kwargs), context)
    return generator_wrapper


async def _awaited(p: _Parts, bindings: dict, args: tuple, kwargs: dict):
    """Await the checked coroutine with its call's bindings current; check its result."""
    __tracebackhide__ = True
    token = _enter((bindings, p.checker, args, kwargs))
    try:
        result = await p.target(*args, **kwargs)
    finally:
        _leave(token)
    return p.post(result, bindings, args, kwargs)


def _drive(gen, context: tuple):
    """Yield what ``gen`` yields, forwarding sent values, thrown exceptions and closing, with
    ``context`` current while each step of its body runs (and only then)."""
    sent = None
    thrown = None
    while True:
        token = _enter(context)
        try:
            if thrown is None:
                value = gen.send(sent)
            else:
                value, thrown = gen.throw(thrown), None
        except StopIteration as stop:
            return stop.value
        finally:
            _leave(token)
        try:
            sent = yield value
        except GeneratorExit:
            token = _enter(context)
            try:
                gen.close()
            finally:
                _leave(token)
            raise
        except BaseException as err:
            thrown = err


async def _drive_async(agen, context: tuple):
    """:func:`_drive` for an async generator."""
    sent = None
    thrown = None
    while True:
        token = _enter(context)
        try:
            if thrown is None:
                value = await agen.asend(sent)
            else:
                value, thrown = await agen.athrow(thrown), None
        except StopAsyncIteration:
            return
        finally:
            _leave(token)
        try:
            sent = yield value
        except GeneratorExit:
            token = _enter(context)
            try:
                await agen.aclose()
            finally:
                _leave(token)
            raise
        except BaseException as err:
            thrown = err


def _fail_function(checker: Checker) -> Callable:
    """The fault call of the compiled check: the explainer raises the error. While
    ``torch.compile`` traces the check, a traced stand-in raises a short error instead (the
    explainer cannot be traced); dynamo reports it with the traced line."""
    def fail(args, kwargs, result=_NO_RESULT, bindings=None):
        __tracebackhide__ = True
        checker.fail(args, kwargs, result, bindings)

    message = ("%s: a tensor does not fit its annotation (found while torch.compile traced the "
               "call; call it without torch.compile to see which and why)" % checker.function)

    def traced_fail(args, kwargs, result=_NO_RESULT, bindings=None):
        raise RuntimeError(message)

    fail._torchdynamo_inline = traced_fail  # type: ignore[attr-defined]
    return fail


def _generate(checker: Checker, target: Callable, plain: bool = True) -> _Parts:
    """Compile ``checker`` into :class:`_Parts`; with ``plain``, also the one-piece wrapper
    (arguments, call with the bindings current, return value) that plain functions use. That
    wrapper takes the function's own parameters when they are plain ones (see
    :func:`_plain_parameters`), else ``(*args, **kwargs)``."""
    src = _Source()
    broadcast = set()
    all_specs = [p.spec for p in checker.params] + list(checker.returns or [])
    for spec in all_specs:
        for dim in spec.dims:
            if dim.kind == VARIADIC and dim.name and dim.broadcastable:
                broadcast.add(dim.name)
    src.broadcast_names = frozenset(broadcast)
    arg_lines = _argument_lines(src, checker, False)
    names = _plain_parameters(checker) if plain else None
    direct_lines = _argument_lines(src, checker, True) if names is not None else arg_lines
    src.seen = None  # assert_shape in the body may have bound any name
    if checker.returns is not None:
        fail_ret = "_fail(args, kwargs, r, b)"
        if checker.returns_tuple:
            src.emit(1, "if not isinstance(r, tuple) or len(r) != %d: %s"
                     % (len(checker.returns), fail_ret))
            for k, spec in enumerate(checker.returns):
                src.emit(1, "v = r[%d]" % k)
                _emit_value(src, 1, spec, False, fail_ret)
        else:
            src.emit(1, "v = r")
            _emit_value(src, 1, checker.returns[0], False, fail_ret)
        if src.symbols:
            src.lines[0:0] = src.symbol_inits()
            src.flush_symbols(1, fail_ret)
    ret_lines = src.lines
    hide = ["    __tracebackhide__ = True"]
    sources = [
        "def pre(args, kwargs):", *hide, *arg_lines, "    return b",
        "def post(r, b, args, kwargs):", *hide, *ret_lines, "    return r",
    ]
    if plain:
        if names is None:
            head = ["def wrapper(*args, **kwargs):", *hide]
            call = "_call(*args, **kwargs)"
        else:
            head = ["def wrapper(%s):" % ", ".join(names), *hide,
                    "    args = (%s)" % "".join(name + ", " for name in names), "    kwargs = _NO_KWARGS"]
            call = "_call(*args)"
        sources += [
            *head, *direct_lines,
            "    token = _enter((b, _checker, args, kwargs))",
            "    try:",
            "        r = %s" % call,
            "    finally:",
            "        _leave(token)",
            *ret_lines, "    return r",
        ]
    source = "\n".join(sources) + "\n"
    namespace = dict(src.consts)
    namespace.update(
        _MISSING=_MISSING, _fail=_fail_function(checker), _call=target, _checker=checker, _CPU=_CPU,
        _NO_KWARGS=_NO_KWARGS, _enter=_enter, _leave=_leave, _merge=merge_variadic, _sym=_symbolic_differs,
    )
    exec(compile(source, "<shapecheck check of %s>" % checker.function, "exec"), namespace)
    wrapper = namespace.get("wrapper")
    if wrapper is not None and names is not None:  # a call that does not fit names the function
        wrapper.__name__, wrapper.__qualname__ = checker.fn.__name__, checker.fn.__qualname__
    return _Parts(checker, namespace["pre"], namespace["post"], target, wrapper)


_NO_KWARGS: Any = types.MappingProxyType({})


def _plain_parameters(checker: Checker) -> Optional[list]:
    """The names of the checked function's parameters when every one is positional-or-keyword
    without a default and none shadows a name of the generated code (``args``, ``kwargs`` or
    a leading underscore); else ``None``. A wrapper with these parameters skips packing
    ``*args, **kwargs`` and looking each argument up (about 0.3 us a call for two tensors,
    torch 2.13, measured); a call that does not fit them raises the ``TypeError`` the function
    would, under its name."""
    try:
        params = inspect.signature(checker.fn, follow_wrapped=False).parameters.values()
    except (TypeError, ValueError):
        return None
    for param in params:
        if param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD or param.default is not param.empty:
            return None
        if param.name.startswith("_") or param.name in ("args", "kwargs"):
            return None
    return [param.name for param in params]


def _argument_lines(src: _Source, checker: Checker, direct: bool) -> list:
    """The lines that check the arguments. ``direct``: ``args`` holds every parameter in order
    (the wrapper with the function's own parameters), else the lines read each one from
    ``args`` or ``kwargs`` if the call passed it. Leaves ``src.lines`` empty."""
    fail_args = "_fail(args, kwargs)"
    src.lines = []
    src.seen = set()
    src.emit(1, "b = {}")
    if checker.devices:
        src.emit(1, "dev = None")
    if not direct and any(p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                             for p in checker.params):
        src.emit(1, "n = len(args)")
    symbols_start = len(src.lines)
    for p in checker.params:
        kind = p.kind
        if direct:
            src.emit(1, "v = args[%d]" % p.index)
            _emit_value(src, 1, p.spec, checker.devices, fail_args)
            continue
        if kind is inspect.Parameter.VAR_POSITIONAL:
            src.emit(1, "for v in args[%d:]:" % p.index)
            src.in_loop = True
            _emit_value(src, 2, p.spec, checker.devices, fail_args)
            src.in_loop = False
            continue
        if kind is inspect.Parameter.VAR_KEYWORD:
            src.emit(1, "for kk, v in kwargs.items():")
            src.emit(2, "if kk in %s: continue" % src.const(checker.named))
            src.in_loop = True
            _emit_value(src, 2, p.spec, checker.devices, fail_args)
            src.in_loop = False
            continue
        if kind is inspect.Parameter.KEYWORD_ONLY:
            src.emit(1, "v = kwargs.get(%r, _MISSING)" % p.name)
        elif kind is inspect.Parameter.POSITIONAL_ONLY:
            src.emit(1, "v = args[%d] if n > %d else _MISSING" % (p.index, p.index))
        else:
            src.emit(1, "v = args[%d] if n > %d else kwargs.get(%r, _MISSING)" % (p.index, p.index, p.name))
        src.emit(1, "if v is not _MISSING:")
        _emit_value(src, 2, p.spec, checker.devices, fail_args)
    if src.symbols:
        src.lines[symbols_start:symbols_start] = src.symbol_inits()
        src.flush_symbols(1, fail_args)
    lines = src.lines
    src.lines = []
    return lines


def _emit_value(src: _Source, indent: int, spec: TensorSpec, devices: bool, fail: str) -> None:
    if spec.optional:
        src.emit(indent, "if v is not None:")
        indent += 1
    src.tensor(indent, "v", spec, devices, fail)


def _symbolic_differs(dim, bindings: dict, size: int) -> bool:
    """True when ``size`` is not the symbolic dim's value under ``bindings`` (or a name in it
    is unbound)."""
    value = eval_symbolic(dim, bindings)
    return value is None or value != size


def _traced_symbolic_differs(dim, bindings: dict, size: int) -> bool:
    return False


# the expression is evaluated with ``eval``, which torch.compile cannot trace: not checked there
_symbolic_differs._torchdynamo_inline = _traced_symbolic_differs  # type: ignore[attr-defined]


def _beartyped(fn: Callable, hints: dict) -> Callable:
    """A twin of ``fn`` (same code, globals, defaults and closure) that beartype checks against
    ``hints`` alone, so tensor annotations are not checked twice. ``fn`` itself when beartype
    is missing or cannot handle the hints."""
    try:
        from beartype import beartype
    except ImportError:
        return fn
    hints = {k: v for k, v in hints.items() if not isinstance(v, str) and not _torch_array(v)}
    if not hints:
        return fn
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    twin.__kwdefaults__ = fn.__kwdefaults__
    twin.__qualname__ = fn.__qualname__
    twin.__module__ = fn.__module__
    twin.__doc__ = fn.__doc__
    twin.__annotations__ = hints
    try:
        return beartype(twin)
    except Exception:
        return fn


@functools.lru_cache(maxsize=1024)
def _value_test(dims: str) -> Callable:
    """A compiled ``test(tensor, bindings) -> bool`` for a dim string (binds as it goes)."""
    spec = dims_spec(dims)
    src = _Source()
    if any(d.kind == VARIADIC and d.name and d.broadcastable for d in spec.dims):
        src.broadcast_names = frozenset(d.name for d in spec.dims if d.kind == VARIADIC and d.name)
    src.tensor(1, "v", spec, False, "return False")
    if src.symbols:
        src.lines[0:0] = src.symbol_inits()
        src.flush_symbols(1, "return False")
    src.emit(1, "return True")
    namespace = dict(src.consts)
    namespace.update(_merge=merge_variadic, _sym=_symbolic_differs)
    source = "def test(v, b):\n" + "\n".join(src.lines) + "\n"
    exec(compile(source, "<shapecheck assert_shape %r>" % dims, "exec"), namespace)
    return namespace["test"]


def _torch_array(hint: Any) -> bool:
    """A jaxtyping annotation of torch tensors in a form the compiled check leaves out (it is
    not given to beartype either: outside ``jaxtyped`` jaxtyping cannot read some of them)."""
    return is_array_annotation(hint) and isinstance(hint.array_type, type) and \
        issubclass(hint.array_type, torch.Tensor)


def assert_shape(tensor: Any, dims: str) -> Any:
    """Check ``tensor`` against a jaxtyping dim string (``"b c"``) and return it.

    Inside a function decorated with :func:`check`, the dims share that call's bindings: a dim
    named in the signature must have the size the arguments gave it, and a new name is bound for
    the rest of the call (the return value included). Outside, the dims are checked on their own.
    Raises :class:`~shapecheck.errors.SignatureShapeError` (``TypeError`` for a non-tensor,
    ``ValueError`` for a dim string that does not parse). A no-op under ``SHAPECHECK_DISABLE=1``,
    as read at import or by the latest :func:`check` or :func:`disabled` (call ``disabled()``
    to refresh it after changing the environment).
    """
    __tracebackhide__ = True
    if _ASSERTS_OFF:
        return tensor
    if not isinstance(dims, str):
        raise TypeError("shapecheck.assert_shape(): dims must be a string such as \"b c\", not %s"
                        % type(dims).__name__)
    test = _value_test(dims)
    context = _CONTEXT.get()
    bindings = context[0] if context is not None else {}
    before = dict(bindings)
    if test(tensor, bindings):
        if context is not None and len(bindings) != len(before):
            where = "assert_shape(%r)" % dims
            for name in [k for k in bindings if k not in before and isinstance(k, str)]:
                bindings[("src", name)] = where
        return tensor
    bindings.clear()
    bindings.update(before)
    if context is None:
        binder = Binder("assert_shape()", _caller_location(), False)
    else:
        binder = _context_binder(context[1], context[2], context[3], before)
    try:
        binder.check_value("assert_shape(%r)" % dims, dims_spec(dims), tensor)
        binder.check_pending()
    except Fault as fault:
        raise fault.error.with_traceback(None) from None
    raise AssertionError("shapecheck: assert_shape(%r) disagrees with its explainer" % dims)


def _caller_location() -> str:
    """``file:line`` of the code that called :func:`assert_shape` (two frames up)."""
    frame = sys._getframe(2)
    return "%s:%d" % (frame.f_code.co_filename, frame.f_lineno)


def _traced_assert_shape(tensor: Any, dims: str) -> Any:
    return tensor


# torch.compile traces this stand-in: the dim string is compiled with ``compile`` and the
# call's bindings live in a ContextVar, neither of which dynamo can trace
assert_shape._torchdynamo_inline = _traced_assert_shape  # type: ignore[attr-defined]


def _context_binder(checker: Checker, args: tuple, kwargs: dict, bindings: dict) -> Binder:
    """A binder holding the current checked call's bindings, with their sources."""
    binder = checker.bind(args, kwargs)
    binder.devices = False
    adopt_asserted(binder, bindings)
    return binder


def current_bindings() -> Optional[dict]:
    """The dims bound so far in the innermost checked call of this thread/task, or ``None``."""
    context = _CONTEXT.get()
    if context is None:
        return None
    return {k: v for k, v in context[0].items() if isinstance(k, str)}
