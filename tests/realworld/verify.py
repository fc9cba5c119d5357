"""Run every case of the real-world corpus with torch: bugs must misbehave, twins must not.

Each case file defines ``demo()``. A bug case passes verification when its demo raises the
exception named in the manifest (``raises``), or, when ``raises`` is null, returns False (a wrong
result that torch does not report). A fixed twin or look-alike passes when its demo returns True.
Device cases marked ``"verified": "meta"`` run with ``.cuda()`` mapped to the ``meta`` device (a
CPU-only stand-in for a second device); cases marked ``"reasoning"`` are only imported, and their
header explains the failure. Run ``python -m tests.realworld.verify`` for a report.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
import warnings
from typing import Any, Callable, Iterator, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")
LOOKALIKES = os.path.join(HERE, "lookalikes")


def load_manifest() -> list[dict]:
    """The manifest's bug-case entries."""
    with open(MANIFEST, encoding="utf-8") as handle:
        return json.load(handle)["cases"]


def lookalike_paths() -> list[str]:
    """Paths (relative to this folder) of the correct look-alike programs."""
    names = sorted(n for n in os.listdir(LOOKALIKES) if n.endswith(".py") and not n.startswith("_"))
    return [os.path.join("lookalikes", n) for n in names]


def load_module(relpath: str) -> Any:
    """Import one case file in-process under a private module name."""
    path = os.path.join(HERE, relpath)
    name = "_realworld_" + relpath.replace(os.sep, "_").replace("/", "_")[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def cuda_as_meta() -> Iterator[None]:
    """Map ``Tensor.cuda()`` / ``Module.cuda()`` to the meta device while a demo runs."""
    import torch

    saved_tensor, saved_module = torch.Tensor.cuda, torch.nn.Module.cuda

    def tensor_cuda(self, *args, **kwargs):
        return self.to("meta")

    def module_cuda(self, *args, **kwargs):
        return self._apply(lambda t: t.to("meta"))

    torch.Tensor.cuda = tensor_cuda  # type: ignore[method-assign]
    torch.nn.Module.cuda = module_cuda  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.Tensor.cuda = saved_tensor  # type: ignore[method-assign]
        torch.nn.Module.cuda = saved_module  # type: ignore[method-assign]


def run_demo(relpath: str, meta: bool) -> tuple[str, Any]:
    """``("returned", value)`` or ``("raised", exception)`` for one file's demo."""
    import torch

    torch.manual_seed(0)
    module = load_module(relpath)
    guard = cuda_as_meta() if meta else contextlib.nullcontext()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with guard:
                value = module.demo()
        except Exception as exc:  # the bug cases are expected to raise
            return "raised", exc
    return "returned", value


def _exception_matches(exc: BaseException, expected: str) -> bool:
    # "RuntimeError|ValueError": torch's einsum raises either, depending on whether opt_einsum is installed
    names = {cls.__name__ for cls in type(exc).__mro__}
    return any(name in names for name in expected.split("|"))


def check_bug(entry: dict) -> Optional[str]:
    """None when the bug case misbehaves as its manifest says, else why not."""
    if entry["verified"] == "reasoning":
        load_module(entry["path"])
        return None
    kind, value = run_demo(entry["path"], entry["verified"] == "meta")
    expected = entry["raises"]
    if expected is None:
        if kind == "returned" and value is False:
            return None
        return "expected demo() to return False, got %s %r" % (kind, value)
    if kind == "raised" and _exception_matches(value, expected):
        return None
    return "expected %s, got %s %r" % (expected, kind, value)


def check_clean(relpath: str, meta: bool = False, reasoning: bool = False) -> Optional[str]:
    """None when a fixed twin or look-alike runs clean and returns True."""
    if reasoning:
        load_module(relpath)
        return None
    kind, value = run_demo(relpath, meta)
    if kind == "returned" and value is True:
        return None
    return "expected demo() to return True, got %s %r" % (kind, value)


def verify_all(report: Callable[[str], None] = lambda line: None) -> list[str]:
    """Every failure as 'path: why'; ``report`` sees one line per failure."""
    failures = []
    for entry in load_manifest():
        meta = entry["verified"] == "meta"
        reasoning = entry["verified"] == "reasoning"
        for path, why in ((entry["path"], check_bug(entry)),
                          (entry["fixed"], check_clean(entry["fixed"], meta, reasoning))):
            if why is not None:
                failures.append("%s: %s" % (path, why))
                report(failures[-1])
    for path in lookalike_paths():
        why = check_clean(path, meta=True)
        if why is not None:
            failures.append("%s: %s" % (path, why))
            report(failures[-1])
    return failures


def main() -> int:
    """Print the failures; exit 1 when there are any."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    failures = verify_all(print)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
