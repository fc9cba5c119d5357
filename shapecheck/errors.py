"""The errors of the shape algebra, and how they render.

Every error carries ``.reason``: one line, no newline, the words the linter puts in its
diagnostic. ``str(err)`` is ``.reason`` followed by a rendering that explains it the way a
teacher would at a whiteboard: a caret under the offending character of an einsum spec, the
operands with the index that disagrees, or the shapes right-aligned in a table with the failing
column marked.

Each class also inherits from the builtin exception that torch raises for the same fault
(``RuntimeError`` for shapes and devices), so that ``except`` clauses written against torch keep
working. ``EinsumSyntaxError`` is both a ``ValueError`` and a ``RuntimeError`` (the
former for code written against earlier shapecheck releases, the latter because ``torch.einsum``
raises it for a spec that does not parse). ``EinsumShapeError`` is a ``ValueError``
too, because torch reports shape faults of einsums with three or more operands through
opt_einsum, which raises ``ValueError``.

``.certain`` says whether the fault is proven (two different known sizes) or only unproven
(a symbol that cannot be shown equal to another size): the linter may choose to report only
certain faults.

This module imports nothing outside the standard library.
"""

from __future__ import annotations

from typing import Optional, Sequence


def visible(text: str) -> str:
    """``text`` with every character that would break a one-line message escaped (``\\n``, ``\\t``)."""
    if text.isprintable():
        return text
    return "".join(_visible_char(c) for c in text)


def _visible_char(c: str) -> str:
    if c.isprintable():
        return c
    return repr(c)[1:-1]


def caret_line(text: str, position: int, width: int = 1) -> str:
    """Spaces then ``^`` marks that sit under ``text[position:position + width]`` once ``text``
    is shown through :func:`visible`."""
    pad = len(visible(text[:position]))
    span = len(visible(text[position:position + width])) if position < len(text) else 1
    return " " * pad + "^" * max(span, 1)


def quote_spec(spec: str) -> str:
    """The spec as it appears inside a reason: ``"bij,bjk->bik"`` (escaped to stay on one line)."""
    return '"' + visible(spec) + '"'


class ShapeCheckError(Exception):
    """Base class of every shapecheck error: ``.reason`` (one line) and a rendering.

    ``ShapeCheckError(reason, rendering="", certain=True)``: a newline or other unprintable
    character in ``reason`` is escaped so that it stays one line; ``rendering`` (any number
    of lines) follows it in ``str(err)``. Subclasses may set more attributes after
    construction; instances pickle with all their attributes."""

    def __init__(self, reason: str, rendering: str = "", certain: bool = True) -> None:
        reason = visible(reason)
        super().__init__(reason)
        self.reason = reason
        self.rendering = rendering
        self.certain = certain

    def __str__(self) -> str:
        if self.rendering:
            return self.reason + "\n" + self.rendering
        return self.reason

    def __reduce__(self):
        return (_rebuild, (type(self), self.__dict__.copy()))


def _rebuild(cls, state):
    err = cls.__new__(cls)
    Exception.__init__(err, state.get("reason", ""))
    err.__dict__.update(state)
    return err


class EinsumSyntaxError(ShapeCheckError, ValueError, RuntimeError):
    """An einsum spec that does not parse: ``.spec``, ``.position`` (0-based index into the spec,
    or ``None``); rendered as the spec with a caret under ``.position``."""

    def __init__(
        self,
        reason: str,
        spec: str,
        position: Optional[int] = None,
        hint: str = "",
        width: int = 1,
    ) -> None:
        self.spec = spec
        self.position = position
        self.hint = hint
        lines = []
        if position is not None:
            lines.append("    " + visible(spec))
            lines.append("    " + caret_line(spec, position, width))
        if hint:
            lines.append(hint)
        super().__init__(reason, "\n".join(lines))


class EinsumOperandCountError(EinsumSyntaxError, RuntimeError):
    """The spec has a different number of input terms than there are operands:
    ``.expected`` (terms in the spec) and ``.given`` (operands passed)."""

    def __init__(
        self,
        reason: str,
        spec: str,
        expected: int,
        given: int,
        position: Optional[int] = None,
        hint: str = "",
    ) -> None:
        self.expected = expected
        self.given = given
        super().__init__(reason, spec, position, hint)


class EinsumShapeError(ShapeCheckError, RuntimeError, ValueError):
    """Operand shapes that do not fit the spec.

    ``.spec``; ``.index``: the label at fault (``"..."`` for the ellipsis dims, ``None`` when a
    term's length differs from its operand's rank); ``.operands``: the operand positions involved
    (one position twice for a repeated index inside one term); ``.sizes``: the sizes in the same
    order (for a rank fault: the number of labels and the rank); ``.position``: where in the
    spec the term of the last operand at fault starts (``None`` when unknown), so that the
    linter can point inside the spec string.
    """

    def __init__(
        self,
        reason: str,
        spec: str,
        index: Optional[str],
        operands: Sequence[int],
        sizes: Sequence[object],
        rendering: str = "",
        certain: bool = True,
        position: Optional[int] = None,
    ) -> None:
        self.spec = spec
        self.index = index
        self.operands = tuple(operands)
        self.sizes = tuple(sizes)
        self.position = position
        super().__init__(reason, rendering, certain)


class BroadcastError(ShapeCheckError, RuntimeError):
    """Shapes that do not broadcast: ``.shapes`` (as given, normalised to tuples or ``Shape``),
    ``.axis`` (negative, counted from the right), ``.table`` (the aligned table text)."""

    def __init__(
        self,
        reason: str,
        shapes: Sequence[object],
        axis: int,
        table: str,
        certain: bool = True,
    ) -> None:
        self.shapes = tuple(shapes)
        self.axis = axis
        self.table = table
        super().__init__(reason, table, certain)


class DeviceMismatchError(ShapeCheckError, RuntimeError):
    """Tensors on different devices used together: ``.devices`` lists ``(what, device)`` pairs."""

    def __init__(self, reason: str, devices: Sequence[tuple] = (), rendering: str = "") -> None:
        self.devices = tuple(devices)
        if not rendering and self.devices:
            width = max(len(str(what)) for what, _ in self.devices)
            rendering = "\n".join(
                "    " + str(what).ljust(width) + "  on " + str(dev) for what, dev in self.devices
            )
        super().__init__(reason, rendering)


class SignatureShapeError(ShapeCheckError, RuntimeError):
    """A value that does not fit its jaxtyping annotation in a ``@check``ed call, or a tensor
    that fails ``assert_shape``. Built as ``SignatureShapeError(reason, rendering)``; the
    runtime sets its further attributes itself."""

    #: the checked function, the argument (or ``return``), the annotated pattern, the actual
    #: shape and the dims bound when the check failed
    function: str
    argument: str
    expected: str
    actual: tuple
    bindings: dict


class DtypeMismatchError(ShapeCheckError, RuntimeError, TypeError):
    """Operands whose dtypes do not fit together, or a dtype not of the annotated kind
    (``Float[...]`` given an integer tensor). Built as ``DtypeMismatchError(reason, rendering)``;
    the runtime sets ``function`` and ``argument`` on those of a ``@check``ed call."""

    function: str
    argument: str


class DimStringError(ShapeCheckError, ValueError):
    """A jaxtyping dimension string that does not parse: ``.text`` and ``.position``."""

    def __init__(self, reason: str, text: str, position: Optional[int] = None, width: int = 1) -> None:
        self.text = text
        self.position = position
        rendering = ""
        if position is not None:
            rendering = "    " + visible(text) + "\n    " + caret_line(text, position, width)
        super().__init__(reason, rendering)
