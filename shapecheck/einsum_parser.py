"""The einsum grammar, parsed once into an :class:`EinsumSpec` that checks operand shapes.

Three spellings parse to the same :class:`EinsumSpec` (equality ignores the text):

``form="letters"``: torch.einsum's grammar, exactly (probed against torch 2.13):

- an index is one ASCII letter, ``a-z`` or ``A-Z``; any other character is an error (a digit, a
  tab, a ``-`` or ``>`` that is not part of the first ``->``, a ``,`` after the arrow);
- spaces may stand anywhere except inside ``...`` and ``->`` (``"a - > a"`` is an error);
- ``...`` at most once per term and once in the output; a lone ``.`` is an error;
- ``->`` is optional; the text after the first ``->`` is the output term;
- the implicit output (no ``->``) is the ellipsis dims (when an input has ``...``), then every
  index that appears exactly once over all the inputs, in ASCII order: uppercase before
  lowercase (``"Ba"`` gives ``Ba``, ``"aB"`` gives ``Ba``, ``"zaZA"`` gives ``AZaz``);
- an index repeated inside one term takes the diagonal (``"ii->i"``); its dims must be equal,
  exactly (a 1 does not broadcast there);
- an output index must appear in some input and only once in the output; an output ellipsis is
  allowed even where no input has one (it then covers no dims);
- empty terms are 0-d operands (``",->"``, ``""`` with one 0-d operand, ``"i,"``);
- across operands a labelled dim of size 1 broadcasts against any size (``0`` included), and
  the ellipsis dims broadcast right-aligned, numpy style;
- with three or more operands torch first runs opt_einsum's parser, which rejects nothing that
  torch's own parser accepts (checked by the differential tests).

``form="named"``: the named-axis form of ``einops.einsum``: axes are Python identifiers
separated by whitespace, terms by commas, ``...`` allowed once per term
(``"batch head i d, batch head j d -> batch head i j"``). The implicit output orders the axes
by name, as the letters form does.

``form="auto"`` (used by ``shapecheck.einsum``): named when some term has whitespace between two
axis tokens (word characters or ``...``), letters otherwise. Single-letter axes mean the same in
both forms, so ``"i j"`` and ``"ij"`` agree.

The sublist form ``einsum(op, [0, 1], op, [1, 2], [0, 2])`` goes through :func:`parse_sublist`,
which spells it as torch does (``0-25`` are ``A-Z``, ``26-51`` are ``a-z``) and parses that.

Sizes in shapes are ints, symbols (strings) or ``None`` (unknown, binds nothing); see
:mod:`shapecheck.broadcast` for how symbols combine.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence, Union

from shapecheck.broadcast import Mismatch, broadcast_table, combine
from shapecheck.einsum_order import ContractionPlan, order_contractions
from shapecheck.errors import (
    EinsumOperandCountError,
    EinsumShapeError,
    EinsumSyntaxError,
    quote_spec,
    visible,
)
from shapecheck.shapes import Dim, Shape, as_shape, format_dim, format_shape

ELLIPSIS = "..."
LETTERS = frozenset(string.ascii_letters)
_AUTO_NAMED = re.compile(r"[\w.]\s+[\w.]")
_SUBLIST_CHARS = string.ascii_uppercase + string.ascii_lowercase

ShapeLike = Union[Shape, Iterable[Dim]]

#: The size that stands for a symbolic or unknown one when contraction orders are compared.
_NOMINAL = 16
_MAX_PLANS = 1024
_PLANS: dict = {}


@dataclass(frozen=True)
class EinsumSpec:
    """A parsed einsum spec.

    ``inputs``: one tuple of labels per operand (``"..."`` stands for the ellipsis);
    ``output``: the output labels (the implicit output when ``explicit_output`` is False);
    ``text``: the spec as written; ``form``: ``"letters"`` or ``"named"``. Two specs are equal
    when their labels are, whatever the spelling.
    """

    inputs: tuple
    output: tuple
    explicit_output: bool
    text: str = field(default="", compare=False)
    form: str = field(default="letters", compare=False)
    spans: tuple = field(default=(), compare=False, repr=False)
    lhs_end: int = field(default=0, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_fast", _fast_plan(self))

    @property
    def contracted(self) -> tuple:
        """The labels summed away: in some input, not in the output, in order of first use."""
        out = set(self.output)
        seen: list = []
        for term in self.inputs:
            for lab in term:
                if lab != ELLIPSIS and lab not in out and lab not in seen:
                    seen.append(lab)
        return tuple(seen)

    @property
    def labels(self) -> tuple:
        """Every input label (ellipsis excluded), in order of first use."""
        seen: dict = {}
        for term in self.inputs:
            for lab in term:
                if lab != ELLIPSIS:
                    seen.setdefault(lab, None)
        return tuple(seen)

    def term_text(self, k: int) -> str:
        """Input term ``k`` as written in this spec's form (``"bij"``, ``"batch i d"``)."""
        return _join_term(self.inputs[k], self.form)

    def output_text(self) -> str:
        """The output term in this spec's form."""
        return _join_term(self.output, self.form)

    def canonical(self) -> str:
        """The spec with an explicit output, in its own form: ``"bij,bjk->bik"``."""
        sep = "," if self.form == "letters" else ", "
        arrow = "->" if self.form == "letters" else " -> "
        return sep.join(self.term_text(k) for k in range(len(self.inputs))) + arrow + self.output_text()

    def letters(self) -> str:
        """An equivalent torch.einsum equation in letters: single-letter names stay, longer
        names take their first letter when it is free, else the first free letter. Raises
        :class:`EinsumSyntaxError` when the spec uses more than 52 distinct axes."""
        if self.form == "letters":
            return self.canonical()
        return _to_letters(self)

    def output_shape(self, *shapes: ShapeLike) -> Shape:
        """The shape of the einsum's result for operands of these shapes.

        Checks the operand count (:class:`EinsumOperandCountError`), each term's length
        against its operand's rank, the repeated indices inside a term and the size bound
        to each index across operands (:class:`EinsumShapeError`)."""
        fast = self._fast  # type: ignore[attr-defined]
        if fast is not None and len(shapes) == len(self.inputs):
            dims = _fast_output(fast, shapes)
            if dims is not None:
                return Shape(dims)
        return _output_shape(self, shapes)

    def contraction_order(self, *shapes: ShapeLike) -> ContractionPlan:
        """A pairwise contraction order and its FLOPs (exhaustive search up to four
        operands, greedy beyond). Validates the shapes first, as :meth:`output_shape` does.
        Plans are cached per spec and shapes. ``path`` is a list of tuples; treat it as
        read-only, since the plan is shared. See :mod:`shapecheck.einsum_order`."""
        try:
            key: Optional[tuple] = (self, self.form, shapes)
            hit = _PLANS.get(key)
        except TypeError:  # a list among the shapes: no caching
            key, hit = None, None
        if hit is not None:
            return hit
        plan = _contraction_plan(self, shapes)
        if key is not None:
            if len(_PLANS) >= _MAX_PLANS:
                _PLANS.clear()
            _PLANS[key] = plan
        return plan


# ---------------------------------------------------------------------------------------------
# parsing


def parse(spec: str, form: str = "auto") -> EinsumSpec:
    """Parse an einsum spec (cached); raises :class:`EinsumSyntaxError`.

    ``form`` is ``"letters"`` (torch.einsum's grammar), ``"named"`` (einops-style words) or
    ``"auto"`` (named when a term has whitespace between two axis tokens)."""
    if not isinstance(spec, str):
        raise EinsumSyntaxError(
            f"einsum spec must be a string, got {type(spec).__name__}", repr(spec), None
        )
    return _parse_cached(spec, form)


@functools.lru_cache(maxsize=4096)
def _parse_cached(spec: str, form: str) -> EinsumSpec:
    if form == "auto":
        form = "named" if _looks_named(spec) else "letters"
    if form == "letters":
        return _parse_letters(spec)
    if form == "named":
        return _parse_named(spec)
    raise ValueError(f"form must be 'auto', 'letters' or 'named', not {form!r}")


def _looks_named(spec: str) -> bool:
    for piece in re.split(r",|->", spec):
        if _AUTO_NAMED.search(piece):
            return True
    return False


def _syntax(spec: str, message: str, position: Optional[int], hint: str = "", width: int = 1) -> EinsumSyntaxError:
    return EinsumSyntaxError(f"einsum {quote_spec(spec)}: {message}", spec, position, hint, width)


def _bad_char(spec: str, pos: int, in_output: bool) -> EinsumSyntaxError:
    c = spec[pos]
    shown = visible(c)
    if c in "->":
        return _syntax(
            spec,
            f"stray '{shown}' at position {pos}",
            pos,
            "    the arrow is written '->', without spaces, and appears at most once",
        )
    if c == "," and in_output:
        return _syntax(
            spec, "',' after '->': the output is a single term", pos,
            "    list the output indices after '->' without commas",
        )
    hint = "    indices are single letters a-z and A-Z"
    if c.isspace():
        hint = "    only plain spaces may separate indices"
    return _syntax(spec, f"'{shown}' at position {pos} is not a valid index", pos, hint)


def _parse_letters(spec: str) -> EinsumSpec:
    arrow = spec.find("->")
    lhs_end = len(spec) if arrow < 0 else arrow
    terms: list[list[str]] = [[]]
    spans: list[list[int]] = [[0, 0]]
    has_ell = False
    i = 0
    while i < lhs_end:
        c = spec[i]
        if c == " ":
            i += 1
            continue
        if c == ".":
            k = len(terms) - 1
            if has_ell:
                raise _syntax(
                    spec, f"a second '...' in the term of operand {k}", i,
                    "    each term may hold one ellipsis",
                )
            if not (i + 2 < lhs_end and spec[i + 1] == "." and spec[i + 2] == "."):
                raise _syntax(
                    spec, f"'.' at position {i} is not part of an ellipsis '...'", i,
                    "    an ellipsis is three dots with nothing between them",
                )
            if not terms[-1]:
                spans[-1][0] = i
            terms[-1].append(ELLIPSIS)
            has_ell = True
            spans[-1][1] = i + 3
            i += 3
            continue
        if c == ",":
            spans[-1][1] = max(spans[-1][1], spans[-1][0])
            terms.append([])
            spans.append([i + 1, i + 1])
            has_ell = False
            i += 1
            continue
        if c not in LETTERS:
            raise _bad_char(spec, i, False)
        if not terms[-1]:
            spans[-1][0] = i
        terms[-1].append(c)
        spans[-1][1] = i + 1
        i += 1
    for sp in spans:
        if sp[1] < sp[0]:
            sp[1] = sp[0]
    inputs = tuple(tuple(t) for t in terms)
    counts = _label_counts(inputs)
    if arrow < 0:
        output = _implicit_output(inputs, counts)
        explicit = False
    else:
        out: list[str] = []
        start = arrow + 2
        i = start
        ell_out = False
        while i < len(spec):
            c = spec[i]
            if c == " ":
                i += 1
                continue
            if c == ".":
                if ell_out:
                    raise _syntax(
                        spec, "a second '...' in the output", i, "    the output may hold one ellipsis"
                    )
                if not (i + 2 < len(spec) and spec[i + 1] == "." and spec[i + 2] == "."):
                    raise _syntax(
                        spec, f"'.' at position {i} is not part of an ellipsis '...'", i,
                        "    an ellipsis is three dots with nothing between them",
                    )
                out.append(ELLIPSIS)
                ell_out = True
                i += 3
                continue
            if c not in LETTERS:
                raise _bad_char(spec, i, True)
            if c not in counts:
                raise _syntax(
                    spec, f"output index {c} does not appear in any input", i,
                    "    every output index must come from some input term",
                )
            if c in out:
                raise _syntax(
                    spec, f"output index {c} appears more than once in the output", i,
                    f"    each output index appears once; to take a diagonal write it twice in an input ({c}{c}->{c})",
                )
            out.append(c)
            i += 1
        output = tuple(out)
        explicit = True
    return EinsumSpec(
        inputs, output, explicit, spec, "letters", tuple((a, b) for a, b in spans), lhs_end
    )


def _label_counts(inputs: tuple) -> dict:
    """How many times each index appears over all input terms (the ellipsis aside)."""
    counts: dict[str, int] = {}
    for t in inputs:
        for lab in t:
            if lab != ELLIPSIS:
                counts[lab] = counts.get(lab, 0) + 1
    return counts


def _implicit_output(inputs: tuple, counts: dict) -> tuple:
    lead = (ELLIPSIS,) if any(ELLIPSIS in t for t in inputs) else ()
    return lead + tuple(sorted(lab for lab, n in counts.items() if n == 1))


_TOKEN = re.compile(r"\S+")


def _parse_named(spec: str) -> EinsumSpec:
    arrow = spec.find("->")
    if arrow >= 0:
        second = spec.find("->", arrow + 2)
        if second >= 0:
            raise _syntax(spec, "a second '->'", second, "    the arrow appears at most once", 2)
    lhs_end = len(spec) if arrow < 0 else arrow
    terms: list[tuple] = []
    spans: list[tuple[int, int]] = []
    start = 0
    pieces = spec[:lhs_end].split(",")
    for k, piece in enumerate(pieces):
        labels = _named_term(spec, piece, start, f"the term of operand {k}")
        toks = list(_TOKEN.finditer(piece))
        if toks:
            spans.append((start + toks[0].start(), start + toks[-1].end()))
        else:
            spans.append((start, start))
        terms.append(labels)
        start += len(piece) + 1
    inputs = tuple(terms)
    counts = _label_counts(inputs)
    if arrow < 0:
        return EinsumSpec(inputs, _implicit_output(inputs, counts), False, spec, "named", tuple(spans), lhs_end)
    rhs = spec[arrow + 2:]
    base = arrow + 2
    if "," in rhs:
        pos = base + rhs.index(",")
        raise _bad_char(spec, pos, True)
    out = _named_term(spec, rhs, base, "the output")
    seen: set = set()
    for m in _TOKEN.finditer(rhs):
        name = m.group()
        if name == ELLIPSIS:
            continue
        pos = base + m.start()
        if name not in counts:
            raise _syntax(
                spec, f"output axis {name} does not appear in any input", pos,
                "    every output axis must come from some input term", len(name),
            )
        if name in seen:
            raise _syntax(
                spec, f"output axis {name} appears more than once in the output", pos,
                "    each output axis appears once", len(name),
            )
        seen.add(name)
    return EinsumSpec(inputs, out, True, spec, "named", tuple(spans), lhs_end)


def _named_term(spec: str, piece: str, offset: int, what: str) -> tuple:
    labels: list[str] = []
    for m in _TOKEN.finditer(piece):
        tok = m.group()
        pos = offset + m.start()
        if tok == ELLIPSIS:
            if ELLIPSIS in labels:
                raise _syntax(spec, f"a second '...' in {what}", pos, "    each term may hold one ellipsis", 3)
            labels.append(ELLIPSIS)
            continue
        if tok.isidentifier():
            labels.append(tok)
            continue
        bad = _first_bad(tok)
        c = tok[bad]
        if c in "->":
            raise _syntax(
                spec, f"stray '{c}' at position {pos + bad}", pos + bad,
                "    the arrow is written '->' and appears at most once",
            )
        if c in "()":
            raise _syntax(
                spec, f"'{c}' at position {pos + bad}: axis composition is not supported in einsum",
                pos + bad, "    name each axis on its own; reshape before or after the einsum",
            )
        if "." in tok:
            raise _syntax(
                spec, f"'{visible(tok)}' at position {pos}: write '...' as an axis of its own", pos,
                "    separate the ellipsis from the axis names with spaces", len(tok),
            )
        raise _syntax(
            spec, f"'{visible(tok)}' at position {pos} is not a valid axis name", pos,
            "    axis names are Python identifiers (letters, digits, '_'; not starting with a digit)",
            len(tok),
        )
    return tuple(labels)


def _first_bad(tok: str) -> int:
    for i, c in enumerate(tok):
        if c in "->()":
            return i
    for i in range(len(tok), 0, -1):
        if tok[:i].isidentifier():
            return i
    return 0


def _join_term(labels: Sequence[str], form: str) -> str:
    if form == "letters":
        return "".join(labels)
    return " ".join(labels)


def _to_letters(spec: EinsumSpec) -> str:
    mapping: dict[str, str] = {}
    used: set = set()
    names = list(spec.labels)
    for name in names:
        if len(name) == 1 and name in LETTERS and name not in used:
            mapping[name] = name
            used.add(name)
    if len(names) > 52:
        raise _syntax(spec.text, f"{len(names)} distinct axes; torch.einsum allows at most 52", None)
    for name in names:
        if name not in mapping and name[0] in LETTERS and name[0] not in used:
            mapping[name] = name[0]
            used.add(name[0])
    free = (c for c in string.ascii_letters if c not in used)
    for name in names:
        if name not in mapping:
            mapping[name] = next(free)
    mapping[ELLIPSIS] = ELLIPSIS
    ins = ",".join("".join(mapping[x] for x in t) for t in spec.inputs)
    return ins + "->" + "".join(mapping[x] for x in spec.output)


def parse_sublist(args: Sequence[Any]) -> tuple:
    """Parse torch's sublist form ``(op, [0, 1], op, [1, 2], [0, 2])``.

    Returns ``(spec, operands)``: the :class:`EinsumSpec` of the equation torch builds
    (``0-25`` are ``A-Z``, ``26-51`` are ``a-z``, ``Ellipsis`` is ``...``) and the operands.
    Raises :class:`EinsumSyntaxError` for a label outside ``[0, 52)`` or of another type."""
    args = tuple(args)
    shown = _show_sublist(args)
    if len(args) < 2:
        raise EinsumSyntaxError(
            "einsum(): give at least one operand and its subscripts list", shown, None,
            "    the sublist form is einsum(op0, [0, 1], op1, [1, 2], [0, 2])",
        )
    subs = list(args[1::2])
    output = args[-1] if len(args) % 2 == 1 else None
    operands = list(args[:-1:2]) if output is not None else list(args[::2])
    terms = [_sublist_term(s, shown, f"operand {k}") for k, s in enumerate(subs[: len(operands)])]
    equation = ",".join(terms)
    if output is not None:
        equation += "->" + _sublist_term(output, shown, "the output")
    return parse(equation, "letters"), operands


def _sublist_term(sub: Any, shown: str, what: str) -> str:
    try:
        items = list(sub)
    except TypeError:
        raise EinsumSyntaxError(
            f"einsum(): the subscripts of {what} must be a list, got {type(sub).__name__}", shown, None
        ) from None
    out = []
    for n in items:
        if n is Ellipsis:
            out.append(ELLIPSIS)
            continue
        if isinstance(n, bool) or not isinstance(n, int):
            raise EinsumSyntaxError(
                f"einsum(): subscript {n!r} of {what} is not an int or Ellipsis", shown, None
            )
        if not 0 <= n < 52:
            raise EinsumSyntaxError(
                f"einsum(): subscript {n} of {what} is not within the valid range [0, 52)", shown, None
            )
        out.append(_SUBLIST_CHARS[n])
    return "".join(out)


def _show_sublist(args: tuple) -> str:
    parts = []
    for k, a in enumerate(args):
        if k % 2 == 1 or (k == len(args) - 1 and len(args) % 2 == 1 and k > 0):
            parts.append(repr(list(a)) if isinstance(a, (list, tuple)) else repr(a))
        else:
            parts.append("op")
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------
# shapes


def _output_shape(spec: EinsumSpec, shapes: Sequence[ShapeLike]) -> Shape:
    if len(shapes) != len(spec.inputs):
        raise _count_error(spec, len(shapes))
    bound = _bind(spec, [as_shape(s) for s in shapes])
    return bound[0]


def _fast_plan(spec: EinsumSpec) -> Optional[tuple]:
    """For specs without ellipsis or repeated indices: (terms, output) for the fast path."""
    for t in spec.inputs:
        if ELLIPSIS in t or len(set(t)) != len(t):
            return None
    if ELLIPSIS in spec.output:
        return None
    return spec.inputs, spec.output


def _fast_output(plan: tuple, shapes: Sequence[Any]) -> Optional[tuple]:
    """Output dims for plain int tuples (``torch.Size`` included) that fit; ``None`` sends the
    caller down the general path, which also explains any fault."""
    terms, output = plan
    sizes: dict = {}
    for labels, dims in zip(terms, shapes):
        if not isinstance(dims, tuple) or len(labels) != len(dims):
            return None
        for lab, d in zip(labels, dims):
            if type(d) is not int:
                return None
            prev = sizes.get(lab)
            if prev is None or prev == 1:
                sizes[lab] = d
            elif d != prev and d != 1:
                return None
    return tuple(sizes[lab] for lab in output)


def _count_error(spec: EinsumSpec, given: int) -> EinsumOperandCountError:
    expected = len(spec.inputs)
    terms = "term" if expected == 1 else "terms"
    ops = "operand was" if given == 1 else "operands were"
    reason = f"einsum {quote_spec(spec.text)}: the spec has {expected} input {terms} but {given} {ops} given"
    if given < expected and spec.spans:
        pos = spec.spans[given][0]
        if given > 0:
            pos = spec.text.rfind(",", 0, pos + 1) if spec.form == "letters" else pos
        hint = f"    no operand for the term{'s' if expected - given > 1 else ''} from here on"
    else:
        pos = spec.lhs_end if spec.text else None
        if given - expected > 1:
            hint = f"    operands {expected} to {given - 1} have no term"
        else:
            hint = f"    operand {given - 1} has no term"
    hint += "; give one operand per comma-separated term"
    return EinsumOperandCountError(reason, spec.text, expected, given, pos, hint)


def _term_start(spec: EinsumSpec, k: int) -> Optional[int]:
    if k < len(spec.spans):
        return spec.spans[k][0]
    return None


def _label_position(spec: EinsumSpec, k: int, label: str) -> Optional[int]:
    """Where ``label`` first appears in operand ``k``'s term (the term's start as fallback)."""
    if k >= len(spec.spans):
        return None
    start, end = spec.spans[k]
    if spec.form == "letters":
        found = spec.text.find(label, start, end)
    else:
        found = -1
        for m in _TOKEN.finditer(spec.text, start, end):
            if m.group() == label:
                found = m.start()
                break
    return found if found >= 0 else start


def _term_label(spec: EinsumSpec, k: int) -> str:
    return '"' + visible(spec.term_text(k)) + '"'


def _rank_error(spec: EinsumSpec, k: int, shape: Shape, n_labels: int, has_ell: bool) -> EinsumShapeError:
    rank = len(shape.dims)
    idx = "index" if n_labels == 1 else "indices"
    what = "axis" if spec.form == "named" else "index"
    if spec.form == "named":
        idx = "axis" if n_labels == 1 else "axes"
    dims = "dim" if rank == 1 else "dims"
    if has_ell:
        reason = (
            f"einsum {quote_spec(spec.text)}: operand {k} has {rank} {dims} {format_shape(shape)} "
            f"but its term {_term_label(spec, k)} has {n_labels} {idx} besides the ellipsis"
        )
        hint = f"    the term needs at least {n_labels} dims; the ellipsis covers the rest"
    else:
        reason = (
            f"einsum {quote_spec(spec.text)}: operand {k} has {rank} {dims} {format_shape(shape)} "
            f"but its term {_term_label(spec, k)} has {n_labels} {idx}"
        )
        if rank > n_labels:
            hint = (
                f"    one {what} per dim; or start the term with '...' to let the ellipsis cover the extra leading dims"
            )
        else:
            hint = f"    one {what} per dim: the term names more dims than the operand has"
    rendering = f"    operand {k}: term {_term_label(spec, k)}, shape {format_shape(shape)}\n{hint}"
    return EinsumShapeError(reason, spec.text, None, (k,), (n_labels, rank), rendering, True, _term_start(spec, k))


def _assign(labels: tuple, shape: Shape) -> tuple:
    """Map a term onto a shape: ``(pairs, ell_dims)`` where pairs are ``(label, dim)`` and
    ``ell_dims`` the dims under the ellipsis (``None`` when their number is unknown)."""
    if ELLIPSIS in labels:
        e = labels.index(ELLIPSIS)
        pre, post = labels[:e], labels[e + 1:]
    else:
        pre, post = labels, ()
    dims = shape.dims
    if shape.rest_at is None:
        n_post = len(post)
        if ELLIPSIS in labels:
            ell = dims[len(pre): len(dims) - n_post]
            tail = dims[len(dims) - n_post:] if n_post else ()
            return tuple(zip(pre, dims)) + tuple(zip(post, tail)), tuple(ell)
        return tuple(zip(labels, dims)), ()
    lead, trail = shape.leading(), shape.trailing()
    pairs = []
    if ELLIPSIS in labels:
        for lab, d in zip(pre, lead):
            pairs.append((lab, d))
        for lab, d in zip(reversed(post), reversed(trail)):
            pairs.append((lab, d))
        return tuple(pairs), None
    for lab, d in zip(labels, lead):
        pairs.append((lab, d))
    n = len(labels)
    for j, d in enumerate(reversed(trail)):
        pos = n - 1 - j
        if pos >= len(lead):
            pairs.append((labels[pos], d))
    return tuple(pairs), ()


def _bind(spec: EinsumSpec, shapes: list) -> tuple:
    """Check the shapes against the spec; return ``(output Shape, sizes per label)``."""
    assigned = []
    for k, (labels, shape) in enumerate(zip(spec.inputs, shapes)):
        has_ell = ELLIPSIS in labels
        n = len(labels) - (1 if has_ell else 0)
        if shape.rest_at is None:
            rank = len(shape.dims)
            if (has_ell and n > rank) or (not has_ell and n != rank):
                raise _rank_error(spec, k, shape, n, has_ell)
        elif not has_ell and n < len(shape.dims):
            raise _rank_error(spec, k, shape, n, has_ell)
        assigned.append(_assign(labels, shape))
    # a repeated index inside one term takes the diagonal: its dims must be equal
    per_op: list[dict] = []
    for k, (pairs, _) in enumerate(assigned):
        local: dict = {}
        for lab, d in pairs:
            if lab not in local:
                local[lab] = d
                continue
            prev = local[lab]
            if prev is None:
                local[lab] = d
            elif d is not None and d != prev:
                raise _size_error(spec, shapes, lab, k, k, prev, d,
                                  isinstance(prev, int) and isinstance(d, int), diagonal=True)
        for lab in spec.inputs[k]:  # an index on a dim of unknown position has an unknown size,
            if lab != ELLIPSIS and lab not in local:  # which may broadcast another operand's 1
                local[lab] = None
        per_op.append(local)
    sizes: dict = {}
    source: dict = {}
    for k, local in enumerate(per_op):
        for lab, d in local.items():
            if lab not in sizes:
                sizes[lab] = d
                source[lab] = k
                continue
            cur = sizes[lab]
            try:
                new = combine(cur, d)
            except Mismatch as m:
                raise _size_error(spec, shapes, lab, source[lab], k, cur, d, m.certain) from None
            if d is not None and d != 1 and (cur is None or cur == 1):
                source[lab] = k
            sizes[lab] = new
    ell, ell_known = _ellipsis_dims(spec, shapes, assigned)
    out: list = []
    rest_at = None
    for lab in spec.output:
        if lab == ELLIPSIS:
            if not ell_known:
                rest_at = len(out)
            out.extend(ell)
        else:
            out.append(sizes[lab])
    if rest_at is not None:
        return Shape(tuple(out), rest_at), sizes
    return Shape(tuple(out)), sizes


def _ellipsis_dims(spec: EinsumSpec, shapes: list, assigned: list) -> tuple:
    width = 0
    known = True
    for k, (_, ell) in enumerate(assigned):
        if ELLIPSIS not in spec.inputs[k]:
            continue
        if ell is None:
            known = False
            continue
        width = max(width, len(ell))
    result: list = [1] * width
    source: list = [None] * width
    for k, (_, ell) in enumerate(assigned):
        if ELLIPSIS not in spec.inputs[k] or ell is None:
            continue
        for j in range(1, len(ell) + 1):
            d = ell[-j]
            cur = result[-j]
            try:
                new = combine(cur, d)
            except Mismatch as m:
                raise _ellipsis_error(spec, shapes, assigned, -j, source[-j], k, cur, d, m.certain) from None
            if d is not None and d != 1 and (source[-j] is None or cur is None or cur == 1):
                source[-j] = k
            result[-j] = new
    if not known:
        result = [None if d == 1 else d for d in result]
    return tuple(result), known


def _operand_rows(spec: EinsumSpec, shapes: list, marks: dict) -> list:
    """Render operands as aligned label/size columns; ``marks[k]`` is the set of term
    positions to mark with ``^`` under operand ``k``."""
    lines = []
    for k in sorted(set(marks)):
        labels = spec.inputs[k]
        pairs = _columns(labels, shapes[k])
        heads = [p[0] for p in pairs]
        vals = [p[1] for p in pairs]
        widths = [max(len(h), len(v)) for h, v in zip(heads, vals)]
        prefix = f"    operand {k}: "
        pad = " " * len(prefix)
        lines.append(prefix + " ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip())
        lines.append(pad + " ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip())
        carets = " ".join(("^" * w if i in marks[k] else " " * w) for i, w in enumerate(widths))
        lines.append(pad + carets.rstrip())
    return lines


def _columns(labels: tuple, shape: Shape) -> list:
    if shape.rest_at is not None:
        pairs = _assign(labels, shape)[0]
        got: dict = {}
        for lab, d in pairs:
            got.setdefault(lab, d)
        return [(lab, "?" if lab == ELLIPSIS else format_dim(got.get(lab))) for lab in labels]
    dims = shape.dims
    if ELLIPSIS in labels:
        e = labels.index(ELLIPSIS)
        n_post = len(labels) - e - 1
        ell = dims[e: len(dims) - n_post]
        cols = [(lab, format_dim(d)) for lab, d in zip(labels[:e], dims)]
        cols.append((ELLIPSIS, "[" + " ".join(format_dim(d) for d in ell) + "]"))
        cols += [(lab, format_dim(d)) for lab, d in zip(labels[e + 1:], dims[len(dims) - n_post:])]
        return cols
    return [(lab, format_dim(d)) for lab, d in zip(labels, dims)]


def _size_error(spec, shapes, lab, first, second, a, b, certain, diagonal=False) -> EinsumShapeError:
    what = "axis" if spec.form == "named" else "index"
    q = quote_spec(spec.text)
    if diagonal:
        reason = (
            f"einsum {q}: {what} {lab} is repeated in operand {first}'s term but its dims differ: "
            f"{format_dim(a)} and {format_dim(b)}"
        )
        article = "an" if what == "axis" or what == "index" else "a"
        rule = (
            f"    {article} {what} repeated inside one term takes the diagonal, so its dims must be equal "
            "(a 1 does not broadcast here)"
        )
        marks = {first: {i for i, x in enumerate(spec.inputs[first]) if x == lab}}
    else:
        reason = (
            f"einsum {q}: {what} {lab} is {format_dim(a)} in operand {first} but "
            f"{format_dim(b)} in operand {second}"
        )
        rule = f"    {what} {lab} must have one size in every term it appears in (a size of 1 broadcasts)"
        marks = {
            first: {i for i, x in enumerate(spec.inputs[first]) if x == lab},
            second: {i for i, x in enumerate(spec.inputs[second]) if x == lab},
        }
    if not certain:
        reason += " (cannot prove equal)"
        rule += f"; {format_dim(a)} and {format_dim(b)} cannot be proven equal"
    lines = _operand_rows(spec, shapes, marks) + [rule]
    return EinsumShapeError(
        reason, spec.text, lab, (first, second), (a, b), "\n".join(lines), certain, _label_position(spec, second, lab)
    )


def _ellipsis_error(spec, shapes, assigned, axis, first, second, a, b, certain) -> EinsumShapeError:
    if first is None:
        first = second
    q = quote_spec(spec.text)
    reason = (
        f"einsum {q}: the dims under '...' do not broadcast: dim {axis} of the ellipsis is "
        f"{format_dim(a)} in operand {first} but {format_dim(b)} in operand {second}"
    )
    if not certain:
        reason += " (cannot prove equal)"
    ells = [tuple(assigned[first][1]), tuple(assigned[second][1])]
    labels = [f"operand {k} '...' {format_shape(Shape(e))}" for k, e in zip((first, second), ells)]
    rows = [broadcast_table(ells, axis, (0, 1), labels)]
    rows.append(
        "    the dims under '...' broadcast like shapes: aligned on the right, equal or 1"
    )
    return EinsumShapeError(
        reason, spec.text, ELLIPSIS, (first, second), (a, b), "\n".join(rows), certain,
        _label_position(spec, second, ELLIPSIS),
    )


# ---------------------------------------------------------------------------------------------
# contraction order


def _contraction_plan(spec: EinsumSpec, shapes: Sequence[ShapeLike]) -> ContractionPlan:
    """Check ``shapes`` against ``spec``, then order its contractions by label sets: the dims
    under the ellipsis become the labels ``...1`` (the last), ``...2`` and so on."""
    if len(shapes) != len(spec.inputs):
        raise _count_error(spec, len(shapes))
    norm = [as_shape(s) for s in shapes]
    _, sizes = _bind(spec, norm)
    ell, _ = _ellipsis_dims(spec, norm, [_assign(t, s) for t, s in zip(spec.inputs, norm)])
    sizes = dict(sizes)
    exact = (
        all(type(v) is int for v in sizes.values())
        and all(type(v) is int for v in ell)
        and all(s.rest_at is None for s in norm)
    )
    ell_labels = [f"...{j}" for j in range(len(ell), 0, -1)]
    for lab, d in zip(ell_labels, ell):
        sizes[lab] = d
    cost_sizes = {k: (v if type(v) is int else _NOMINAL) for k, v in sizes.items()}
    terms = []
    for k, t in enumerate(spec.inputs):
        labs = {x for x in t if x != ELLIPSIS}
        if ELLIPSIS in t:
            n = len(norm[k].dims) - (len(t) - 1) if norm[k].rest_at is None else len(ell)
            labs |= set(ell_labels[len(ell_labels) - n:]) if n > 0 else set()
        terms.append(frozenset(labs))
    out: set = set()
    for x in spec.output:
        out |= set(ell_labels) if x == ELLIPSIS else {x}
    order = list(spec.labels) + sorted(x for x in sizes if x.startswith("..."))

    def term(labels: frozenset) -> str:
        ordered = [x for x in order if x in labels]
        named = [x for x in ordered if not x.startswith("...")]
        body = _join_term(named, spec.form)
        if len(named) < len(ordered):
            body = ELLIPSIS + ((" " if spec.form == "named" and body else "") + body)
        return body

    sep = "," if spec.form == "letters" else ", "
    arrow = "->" if spec.form == "letters" else " -> "

    def describe(a: frozenset, b: frozenset, keep: frozenset) -> str:
        return term(a) + sep + term(b) + arrow + term(keep)

    whole = spec.canonical() if terms else ""
    return order_contractions(terms, frozenset(out), cost_sizes, exact, describe, whole)
