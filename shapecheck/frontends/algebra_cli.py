"""The ``shapecheck einsum`` and ``shapecheck broadcast`` commands (wired up by ``cli.py``).

Shapes on the command line are written ``8x3x4``, ``8,3,4`` or ``b,3,4`` (symbols need commas;
``x`` separates plain sizes only); ``(8, 3, 4)`` and ``[8, 3, 4]`` work too, and ``8`` is a 1-d
shape. A 0-d (scalar) shape is ``()`` or ``scalar``. ``?`` is an unknown size, and one ``...``
(or ``*name``) stands for any number of unknown leading, middle or trailing dims.

Exit codes: 0 the shapes fit; 1 the spec or the shapes are wrong (the explanation is printed);
2 bad input: an argument that is not a shape, or no shapes where some are needed (one line).
"""

from __future__ import annotations

import re
from typing import Optional, TextIO

from shapecheck.broadcast import broadcast_shapes, broadcast_table
from shapecheck.einsum_parser import ELLIPSIS, EinsumSpec, parse
from shapecheck.errors import ShapeCheckError, visible
from shapecheck.shapes import Dim, Shape, format_shape

_INT = re.compile(r"[0-9]+\Z")


class ShapeTextError(ValueError):
    """A command-line argument that does not spell a shape."""


def parse_shape_text(text: str) -> Shape:
    """Read a shape written on the command line (see the module docstring for the spelling)."""
    raw = text
    text = text.strip()
    if text in ("()", "[]", "scalar"):
        return Shape(())
    if len(text) >= 2 and (text[0], text[-1]) in (("(", ")"), ("[", "]")):
        text = text[1:-1].strip()
    if not text:
        raise ShapeTextError(f"'{visible(raw)}' is not a shape; write a 0-d shape as () or scalar")
    if "," in text:
        pieces = [p.strip() for p in text.split(",")]
        if pieces[-1] == "" and len(pieces) > 1:
            pieces.pop()
    else:
        parts = text.split("x")
        if len(parts) > 1 and all(_INT.match(p.strip()) or p.strip() == "?" for p in parts):
            pieces = [p.strip() for p in parts]
        else:
            pieces = [text]
    dims: list[Dim] = []
    rest_at: Optional[int] = None
    rest_name: Optional[str] = None
    for p in pieces:
        if _INT.match(p):
            dims.append(int(p))
        elif p == "?":
            dims.append(None)
        elif p == ELLIPSIS or (p.startswith("*") and p[1:].isidentifier()):
            if rest_at is not None:
                raise ShapeTextError(f"'{visible(raw)}' has more than one '...' or '*name'")
            rest_at = len(dims)
            rest_name = p[1:] if p.startswith("*") else None
        elif p.isidentifier():
            dims.append(p)
        elif "x" in p and "," not in text and p == text:
            raise ShapeTextError(
                f"'{visible(raw)}' is not a shape; 'x' separates plain sizes (8x3x4), "
                "write symbols with commas (b,3,4)"
            )
        else:
            what = f"'{visible(p)}' in '{visible(raw)}'" if p != raw.strip() else f"'{visible(raw)}'"
            raise ShapeTextError(
                f"{what} is not a size: use a non-negative int, a name, ? (unknown) or ..."
            )
    return Shape(tuple(dims), rest_at, rest_name)


def _shapes(texts: list[str], out: TextIO) -> Optional[list[Shape]]:
    try:
        return [parse_shape_text(t) for t in texts]
    except ShapeTextError as e:
        out.write(f"shapecheck: {e}\n")
        return None


def einsum_command(spec: str, shapes: list[str], out: TextIO) -> int:
    """``shapecheck einsum SPEC [SHAPE ...]``: print the parsed spec (inputs, output,
    contracted indices); with shapes, the output shape and, for three or more operands, the
    contraction order and its FLOPs. Returns the exit code (0, 1 or 2, as in the module doc)."""
    parsed_shapes = _shapes(shapes, out)
    if parsed_shapes is None:
        return 2
    try:
        es = parse(spec)
    except ShapeCheckError as e:
        out.write(str(e) + "\n")
        return 1
    _describe(es, parsed_shapes, out)
    if not parsed_shapes:
        return 0
    try:
        result = es.output_shape(*parsed_shapes)
        plan = es.contraction_order(*parsed_shapes) if len(parsed_shapes) >= 3 else None
    except ShapeCheckError as e:
        out.write("\n" + str(e) + "\n")
        return 1
    out.write(f"output shape: {format_shape(result)}\n")
    if plan is not None:
        out.write("contraction order:\n")
        width = max(len(s.equation) for s in plan.steps)
        for n, step in enumerate(plan.steps, 1):
            flops = "?" if step.flops is None else f"{step.flops:,}"
            out.write(f"  {n}. operands {step.i} and {step.j}: {step.equation.ljust(width)}  FLOPs {flops}\n")
        if plan.flops is None:
            out.write("total FLOPs: unknown (some sizes are symbols or unknown; order chosen as if they were 16)\n")
        else:
            out.write(f"total FLOPs: {plan.flops:,} (in one step: {plan.naive_flops:,})\n")
    return 0


def _describe(es: EinsumSpec, shapes: list[Shape], out: TextIO) -> None:
    out.write(f"spec: {visible(es.text)}  ({es.form} form)\n")
    width = max([len(es.term_text(k)) for k in range(len(es.inputs))] + [2])
    out.write("inputs:\n")
    for k in range(len(es.inputs)):
        term = es.term_text(k) or "(0-d)"
        line = f"  operand {k}: {term.ljust(width)}"
        if k < len(shapes):
            line += f"  {format_shape(shapes[k])}"
        out.write(line.rstrip() + "\n")
    how = "explicit" if es.explicit_output else "implicit"
    out.write(f"output: {es.output_text() or '(0-d)'}  ({how})\n")
    contracted = es.contracted
    sep = "" if es.form == "letters" else " "
    out.write(f"contracted: {sep.join(contracted) if contracted else '(none)'}\n")


def broadcast_command(shapes: list[str], out: TextIO) -> int:
    """``shapecheck broadcast SHAPE SHAPE ...``: print the shapes right-aligned with the result,
    or the table that shows why they do not broadcast. Returns the exit code (0, 1 or 2)."""
    if not shapes:
        out.write("shapecheck: give at least one shape, e.g. shapecheck broadcast 8x1x4 3x1\n")
        return 2
    parsed = _shapes(shapes, out)
    if parsed is None:
        return 2
    try:
        result = broadcast_shapes(*parsed)
    except ShapeCheckError as e:
        out.write(str(e) + "\n")
        return 1
    labels = [f"shape {i} {format_shape(s)}" for i, s in enumerate(parsed)] + [f"result {format_shape(result)}"]
    out.write(broadcast_table(parsed + [result], labels=labels) + "\n")
    return 0
