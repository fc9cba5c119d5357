"""Scaffold a new rule: its module, its line in the rule catalog, and its two example files.

    python scripts/new_rule.py SC607 some-rule-name [--severity warning] [--root DIR]

creates ``shapecheck/rules/<family>/sc607_some_rule_name.py`` (the family from the code's first
digit), imports it in ``shapecheck/rules/__init__.py`` (which registers it), and creates
``examples/sc607_some_rule_name_bad.py`` and ``_good.py``. What it writes is not a rule yet: the
summary and the doc page say TODO and the example tuples are empty, so the test suite fails
(tests/rules/test_rule_examples.py, tests/frontends/test_examples_dir.py) until the rule is
written. CONTRIBUTING.md lists the steps. A code or a name that exists already is refused with
one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Optional

#: The family package of each code's first digit (SC1xx is ``layout``...).
FAMILIES = {"1": "layout", "2": "shape", "3": "autograd", "4": "device", "5": "einsum", "6": "pitfall"}

CODE = re.compile(r"SC([1-9])\d\d\Z")
NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*\Z")
NAME_LINE = re.compile(r'^\s*name\s*=\s*"([^"]*)"', re.MULTILINE)

RULE_TEMPLATE = '''\
"""{code} {name}: TODO: one line that says what the rule flags."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Rule, register


@register
class {cls}(Rule):
    """{code}: TODO: the summary."""
    code = "{code}"
    name = "{name}"
    severity = "{severity}"
    summary = "TODO: one line that says what the rule flags"
    doc = """\\
## What it does
TODO: what the rule flags, precisely: which calls or statements, known to be what.

## Why is this bad?
TODO: what goes wrong at run time: the error torch raises (quote it), or the silent wrong result.

## Example
```python
TODO: the smallest program with the bug
```

## Use instead
```python
TODO: the same program, fixed
```
"""
    # TODO: programs the rule must leave alone, and programs it must flag exactly once, on the
    # line marked `# <--`. tests/rules/test_rule_examples.py runs each one through the engine;
    # it fails while either tuple is empty.
    valid = ()
    invalid = ()

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """TODO: report the bug with ``ctx.report(node, message)``; hooks are named after libcst
        node classes (``visit_BinaryOperation``, ``visit_For``...), ``ctx`` answers what the
        inference knows (``ctx.fact(expr)``, ``ctx.qualname(expr)``)."""
'''

BAD_TEMPLATE = '''\
"""{code} {name}: TODO: the bug, in one line.

Run it: `python examples/{stem}_bad.py` TODO: what happens (the error torch raises, or the wrong
result).
"""

import torch

# TODO: a small runnable program with the bug; `shapecheck lint --select {code}` must flag it.

if __name__ == "__main__":
    print(torch.__version__)
'''

GOOD_TEMPLATE = '''\
"""{code} {name}, fixed: TODO: the fix, in one line.

Run it: `python examples/{stem}_good.py` TODO: what it prints.
"""

import torch

# TODO: the program of {stem}_bad.py with the bug fixed; no rule may flag it, and it must run.

if __name__ == "__main__":
    print(torch.__version__)
'''


class Refused(Exception):
    """The scaffold cannot go on: the message is the one line it prints."""


def class_name(name: str) -> str:
    """``some-rule-name`` -> ``SomeRuleName``."""
    return "".join(part.capitalize() for part in name.split("-"))


def existing_rule(rules: Path, code: str, name: str) -> Optional[str]:
    """Why ``code`` or ``name`` is taken (a one-line reason), or ``None`` when both are free."""
    stem_suffix = "_" + name.replace("-", "_") + ".py"
    for path in sorted(rules.glob("*/sc[0-9][0-9][0-9]_*.py")):
        where = path.relative_to(rules.parent.parent)
        if path.name.startswith(code.lower() + "_"):
            return f"{code} exists already ({where})"
        if path.name.endswith(stem_suffix) or name in NAME_LINE.findall(path.read_text(encoding="utf-8")):
            return f"the name {name} exists already ({where})"
    return None


def register_line(init: str, family: str, stem: str) -> str:
    """The catalog ``init`` with ``stem`` imported in the block of ``family``, kept sorted."""
    block = re.compile(
        rf"^from shapecheck\.rules\.{family} import \(\n((?:    \w+,\n)*)\)\n", re.MULTILINE
    )
    found = block.search(init)
    if found is not None:
        names = sorted({*re.findall(r"(\w+),", found.group(1)), stem})
        body = "".join(f"    {n},\n" for n in names)
        return init[: found.start()] + f"from shapecheck.rules.{family} import (\n{body})\n" + init[found.end():]
    blocks = list(re.finditer(r"^from shapecheck\.rules\.(\w+) import \(\n(?:    \w+,\n)*\)\n", init, re.MULTILINE))
    new = f"from shapecheck.rules.{family} import (\n    {stem},\n)\n"
    after = [b for b in blocks if b.group(1) > family]
    at = after[0].start() if after else (blocks[-1].end() if blocks else len(init))
    return init[:at] + new + init[at:]


def scaffold(root: Path, code: str, name: str, severity: str) -> list[tuple[str, Path]]:
    """Create the rule and its examples under ``root``; ``(created|edited, path)`` for each file."""
    match = CODE.match(code)
    if match is None:
        raise Refused(f"{code!r} is not a rule code: SC followed by three digits, such as SC607")
    if NAME.match(name) is None:
        raise Refused(f"{name!r} is not a rule name: lower-case words joined by '-', such as view-size-mismatch")
    family = FAMILIES.get(match.group(1))
    rules = root / "shapecheck" / "rules"
    if family is None or not (rules / family).is_dir():
        raise Refused(f"no rule family for {code}: the families are "
                      + ", ".join(f"SC{d}xx ({f})" for d, f in FAMILIES.items()))
    taken = existing_rule(rules, code, name)
    if taken is not None:
        raise Refused(taken)
    stem = f"{code.lower()}_{name.replace('-', '_')}"
    module = rules / family / f"{stem}.py"
    bad = root / "examples" / f"{stem}_bad.py"
    good = root / "examples" / f"{stem}_good.py"
    for path in (module, bad, good):
        if path.exists():
            raise Refused(f"{path.relative_to(root)} exists already")
    init = rules / "__init__.py"
    catalog = init.read_text(encoding="utf-8")
    values = {"code": code, "name": name, "cls": class_name(name), "severity": severity, "stem": stem}
    module.write_text(RULE_TEMPLATE.format(**values), encoding="utf-8")
    bad.write_text(BAD_TEMPLATE.format(**values), encoding="utf-8")
    good.write_text(GOOD_TEMPLATE.format(**values), encoding="utf-8")
    init.write_text(register_line(catalog, family, stem), encoding="utf-8")
    return [("created", module), ("created", bad), ("created", good), ("edited", init)]


def main(argv: Optional[list[str]] = None) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(prog="python scripts/new_rule.py", description=__doc__.splitlines()[0])
    parser.add_argument("code", help="the new rule's code, such as SC607")
    parser.add_argument("name", help="the new rule's name, such as some-rule-name")
    parser.add_argument("--severity", choices=("error", "warning"), default="error",
                        help="error: the code raises at run time; warning: a likely bug or a slow path")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the repository to add the rule to (default: this checkout)")
    args = parser.parse_args(argv)
    try:
        done = scaffold(args.root, args.code, args.name, args.severity)
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for what, path in done:
        print(f"{what} {path.relative_to(args.root)}")
    print("next: fill in every TODO (CONTRIBUTING.md, 'Add a rule'), then run "
          "`python -m shapecheck.frontends.docs --write-readme` and the tests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
