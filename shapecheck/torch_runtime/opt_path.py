"""The pairwise order ``torch.einsum`` takes for three or more operands, found cheaply.

``torch.einsum`` asks ``opt_einsum.contract_path`` for the order, which parses the equation,
runs the path search, then builds a report of every step (einsum strings, costs, sizes) that
torch throws away. For a chain of five small matrices the search is 280 us of contract_path's
490 us (torch 2.13, opt_einsum 3.4, measured), so a never-seen shape costs ``shapecheck.einsum``
what it costs torch unless the report is skipped. :func:`search_path` calls the same search
function (``opt_einsum.paths.get_path_fn(strategy)``) with the same arguments
``contract_path`` would give it: one frozenset of symbols per term, the output's, the size of
every symbol (a size-1 dim broadcasts to another operand's size, as contract_path has it) and no
memory limit; so the path is the one contract_path returns for that equation.

A spec in torch's letters without ``...`` keeps its own letters, so the frozensets (and the
search's tie-breaks, which follow their iteration order) are those of ``torch.einsum``'s own
call; other specs are renamed to opt_einsum's symbols in order of first use.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

ELLIPSIS = "..."

_TERMS: dict = {}  # (inputs, output, form) -> (symbol strings of the inputs, output frozenset, input frozensets)
_MAX_TERMS = 1024


def search_path(opt_einsum: Any, parsed, shapes: Sequence[Sequence[int]], strategy) -> Optional[list]:
    """The path (opt_einsum's format, a list of index tuples) for operands of ``shapes``, or
    ``None`` when this shortcut does not apply (a spec with ``...``, a strategy that is not a
    name, fewer than three operands): then ask ``contract_path``."""
    if not isinstance(strategy, str) or len(shapes) < 3:
        return None
    terms = _symbols(opt_einsum, parsed)
    if terms is None:
        return None
    strings, output, sets = terms
    sizes: dict = {}
    for term, shape in zip(strings, shapes):
        for char, dim in zip(term, shape):
            dim = int(dim)
            held = sizes.get(char)
            if held is None or held == 1:
                sizes[char] = dim
    search = opt_einsum.paths.get_path_fn(strategy)
    return [tuple(step) for step in search(list(sets), output, sizes, None)]


def _symbols(opt_einsum: Any, parsed) -> Optional[tuple]:
    """The spec's terms as opt_einsum symbol strings, cached per spec; ``None`` with ``...``."""
    key = (parsed.inputs, parsed.output, parsed.form)
    found = _TERMS.get(key)
    if found is not None:
        return found
    if any(ELLIPSIS in term for term in parsed.inputs) or ELLIPSIS in parsed.output:
        return None
    if parsed.form == "letters":
        names = {label: label for term in parsed.inputs for label in term}
    else:
        names = {}
        for term in parsed.inputs:
            for label in term:
                if label not in names:
                    names[label] = opt_einsum.get_symbol(len(names))
    strings = tuple("".join(names[label] for label in term) for term in parsed.inputs)
    output = frozenset(names[label] for label in parsed.output)
    found = (strings, output, tuple(frozenset(term) for term in strings))
    if len(_TERMS) >= _MAX_TERMS:
        _TERMS.clear()
    _TERMS[key] = found
    return found
