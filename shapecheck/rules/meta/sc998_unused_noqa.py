"""SC998 unused-noqa: a suppression comment naming shapecheck codes that silences nothing."""

from __future__ import annotations

from shapecheck.rules.base import Rule, register


@register
class UnusedNoqa(Rule):
    """SC998: a ``# noqa: SC...`` or ``# shapecheck: ignore`` that silences nothing (opt-in).

    The engine (:mod:`shapecheck.engine.noqa`) reports it where it applies the suppressions:
    this class carries the rule's documentation, selection and examples, and has no hooks.
    """

    code = "SC998"
    name = "unused-noqa"
    severity = "warning"
    default_enabled = False
    needs = ("noqa", "shapecheck:")  # the rule has no hooks: the engine reads the comments
    summary = "a `# noqa: SC...` or `# shapecheck: ignore` comment that silences nothing"
    doc = """\
## What it does
Flags a suppression comment that names shapecheck codes (`# noqa: SC101`,
`# shapecheck: ignore[SC2]`, `# shapecheck: ignore`) where no finding of those codes starts on its
line in this run. A code of a rule that did not run is named as such. A bare `# noqa` is left
alone: it may be there for another linter. Like ruff's `RUF100`, it is opt-in: select it
(`--extend-select SC998`) with the rules the comments name, or they count as not run.

## Why is this bad?
A suppression outlives the code it was written for: after a refactor it silences nothing today
and hides tomorrow's real bug on that line.

## Example
```python
y = x.reshape(6)  # noqa: SC101
```

## Use instead
```python
y = x.reshape(6)
```
"""
    valid = (
        "x = 1  # noqa\n",
        "x = 1  # noqa: E501\n",
        "x = 1\n",
        "x = 1  # noqa: SC101, SC998\n",
    )
    invalid = (
        "x = 1  # noqa: SC101  # <--\n",
        "x = 1  # shapecheck: ignore  # <--\n",
        "x = 1  # shapecheck: ignore[SC2]  # <--\n",
        "x = 1  # noqa: E501, SC1  # <--\n",
    )
