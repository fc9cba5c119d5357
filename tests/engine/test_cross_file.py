"""Facts across the files of one run: functions imported from another file of the run are
re-analysed with the facts of the call site, and the cache re-lints a caller whose callee changed."""

from __future__ import annotations

from conftest import write_tree

from shapecheck.engine import runner as lint
from shapecheck.engine.config import Selectors, build_settings
from shapecheck.engine.run_imports import Link, imported_names, link_digest, module_name, plan_links

HELPERS = "def heads(x):\n    return x.transpose(1, 2)\n\n\ndef other(x):\n    return x\n"
FIXED = "def heads(x):\n    return x.transpose(1, 2).contiguous()\n\n\ndef other(x):\n    return x\n"
CALLER = (
    "import torch\nfrom .layers import heads\n\n\n"
    "def f():\n    y = torch.randn(2, 3, 4)\n    return heads(y).view(2, 12)\n"
)
ABSOLUTE = (
    "import torch\nfrom pkg.layers import heads as h\n\n\n"
    "def g():\n    return h(torch.randn(2, 3, 4)).view(-1)\n"
)


def _settings(root):
    return build_settings(str(root), None, Selectors(select=["SC101"]))


def _found(run):
    return [(d.path.replace("\\", "/"), d.code, d.line) for d in run.diagnostics]


def test_module_names_follow_the_package_chain(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/mod.py": "",
                          "script.py": ""})
    assert module_name(str(tmp_path / "pkg/sub/mod.py")) == ("pkg.sub.mod", False)
    assert module_name(str(tmp_path / "pkg/sub/__init__.py")) == ("pkg.sub", True)
    assert module_name(str(tmp_path / "script.py")) == ("script", False)


def test_from_imports_resolve_relative_to_the_importer():
    text = "from .layers import a, b as c\nfrom ..util import (d,\n    e as f)\nfrom x.y import g\n"
    assert imported_names(text, "pkg.sub.mod", False) == [
        ("a", "pkg.sub.layers", "a"), ("c", "pkg.sub.layers", "b"),
        ("d", "pkg.util", "d"), ("f", "pkg.util", "e"), ("g", "x.y", "g"),
    ]
    assert imported_names("from . import a\n", "pkg", True) == [("a", "pkg", "a")]
    assert imported_names("from ... import a\n", "pkg.mod", False) == []


def test_only_functions_and_classes_of_files_of_the_run_are_linked(tmp_path):
    layers = HELPERS + "\n\nclass Block:\n    pass\n"
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": layers})
    plan = plan_links([
        (str(tmp_path / "pkg/layers.py"), layers),
        (str(tmp_path / "pkg/model.py"), "from .layers import heads, missing, Block\nfrom torch import nn\n"),
    ])
    assert plan == {str(tmp_path / "pkg/model.py"): (Link("heads", "pkg.layers", "heads"),
                                                      Link("Block", "pkg.layers", "Block"))}


def test_a_helper_of_another_file_is_re_analysed_at_the_call(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": HELPERS, "pkg/model.py": CALLER,
                          "pkg/use.py": ABSOLUTE})
    monkeypatch.chdir(tmp_path)
    run = lint.run(["."], _settings(tmp_path), jobs=1, use_cache=False)
    assert _found(run) == [("pkg/model.py", "SC101", 7), ("pkg/use.py", "SC101", 6)]


def test_the_files_alone_say_nothing(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": HELPERS, "pkg/model.py": CALLER})
    monkeypatch.chdir(tmp_path)
    assert lint.run(["pkg/model.py"], _settings(tmp_path), jobs=1, use_cache=False).diagnostics == []


def test_a_fixed_helper_is_silent(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": FIXED, "pkg/model.py": CALLER})
    monkeypatch.chdir(tmp_path)
    assert lint.run(["."], _settings(tmp_path), jobs=1, use_cache=False).diagnostics == []


def test_a_change_in_the_callee_re_lints_its_callers(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pyproject.toml": "[project]\nname='x'\n", "pkg/__init__.py": "",
                          "pkg/layers.py": HELPERS, "pkg/model.py": CALLER})
    monkeypatch.chdir(tmp_path)
    first = lint.run(["."], _settings(tmp_path), jobs=1)
    assert _found(first) == [("pkg/model.py", "SC101", 7)]
    calls = []
    original = lint._Linter.lint
    monkeypatch.setattr(
        lint._Linter, "lint", lambda self, job, mode: calls.append(job.path) or original(self, job, mode)
    )
    assert lint.run(["."], _settings(tmp_path), jobs=1).diagnostics == first.diagnostics
    assert calls == []
    (tmp_path / "pkg/layers.py").write_text(FIXED)
    third = lint.run(["."], _settings(tmp_path), jobs=1)
    assert sorted(p.replace("\\", "/") for p in calls) == ["pkg/layers.py", "pkg/model.py"]
    assert third.diagnostics == []


def test_the_digest_covers_the_linked_texts():
    link = (Link("heads", "pkg.layers", "heads"),)
    one = link_digest(b"x", link, {"pkg.layers": b"a"})
    assert one == link_digest(b"x", link, {"pkg.layers": b"a"})
    assert one != link_digest(b"x", link, {"pkg.layers": b"b"})
    assert one != link_digest(b"y", link, {"pkg.layers": b"a"})


NET = (
    "import torch.nn as nn\nfrom torch.nn import Module\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
    "        return self.fc(x)\n\n\nclass Deeper(Net):\n    pass\n\n\nclass Head(Module):\n    pass\n\n\n"
    "class Plain:\n    def to(self, device):\n        return self\n\n    def __call__(self, x):\n        return x\n"
)
TRAIN = (
    "import torch\nfrom .net import Net, Deeper, Head, Plain\n\n\ndef main(kind):\n"
    "    device = torch.device('cuda')\n    model = {kind}().to(device)\n    return model(torch.randn(8, 4))\n"
)


def test_an_imported_module_class_makes_a_module(tmp_path, monkeypatch):
    """An instance of an ``nn.Module`` class of another file of the run is a module: moved to
    the GPU, it is given a CPU tensor. A plain class of that file is not."""
    files = {"pkg/__init__.py": "", "pkg/net.py": NET}
    files.update({f"pkg/use_{kind.lower()}.py": TRAIN.replace("{kind}", kind)
                  for kind in ("Net", "Deeper", "Head", "Plain")})
    write_tree(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    settings = build_settings(str(tmp_path), None, Selectors(select=["SC403"]))
    run = lint.run(["."], settings, jobs=1, use_cache=False)
    assert _found(run) == [("pkg/use_deeper.py", "SC403", 8), ("pkg/use_head.py", "SC403", 8),
                           ("pkg/use_net.py", "SC403", 8)]
    assert lint.run(["pkg/use_net.py"], settings, jobs=1, use_cache=False).diagnostics == []
