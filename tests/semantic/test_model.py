"""The semantic model on its own: the interpreter runs without rules, tells an observer the
nodes it passes (pre-order, loop bodies once), and the semantic package imports no rule, engine
or front end."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

import shapecheck.semantic
from shapecheck.semantic.eval.registry import EXPRESSIONS, METHODS, method
from shapecheck.semantic.evaluator import Evaluator
from shapecheck.semantic.facts import MODULE, TENSOR
from shapecheck.semantic.interpreter import Interpreter
from shapecheck.semantic.model import SemanticModel
from shapecheck.shapes import Shape

SEMANTIC = Path(shapecheck.semantic.__file__).parent


def _run(code: str, observer=None) -> tuple[SemanticModel, Interpreter]:
    model = SemanticModel()
    interpreter = Interpreter(model, Evaluator(model), observer)
    interpreter.run(cst.parse_module(textwrap.dedent(code)))
    return model, interpreter


def test_the_interpreter_fills_the_model_without_rules():
    model, interpreter = _run("""
    import torch
    import torch.nn as nn
    from jaxtyping import Float
    W = torch.zeros(2, 3)

    def pool(x: Float[torch.Tensor, "b t c"]) -> Float[torch.Tensor, "b c"]:
        return x.mean(1)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

    net = Net()
    """)
    assert model.imports.aliases == {"torch": "torch", "nn": "torch.nn", "Float": "jaxtyping.Float"}
    assert model.signatures["pool"] == ([("x", Shape(("b", "t", "c")))], Shape(("b", "c")))
    assert model.classes == {"Net": True} and set(model.class_attrs["Net"]) == {"self.fc"}
    assert {"W", "pool", "Net", "net"} <= model.module_names and "W" in model.module_globals
    assert model.env["W"].kind == TENSOR and model.env["W"].shape == Shape((2, 3))
    assert model.env["net"].kind == MODULE and model.env["net"].qual == "Net"
    assert model.scopes.depth == 0 and model.infer_errors == []
    assert interpreter.path == []


class _Recorder:
    """An observer that records the class of every node it is told about."""

    def __init__(self, watched: set[str]) -> None:
        self.watched = watched
        self.seen: list[str] = []

    def watches(self, node_type: type) -> bool:
        return node_type.__name__ in self.watched

    def visit(self, node: cst.CSTNode) -> None:
        self.seen.append(type(node).__name__)

    def unwatched(self, node_types) -> frozenset:
        return frozenset(tp for tp in node_types if tp.__name__ not in self.watched)


def test_an_observer_sees_nodes_in_pre_order_and_each_loop_body_once():
    recorder = _Recorder({"Module", "For", "Assign", "Call", "Name", "Integer", "FunctionDef"})
    _run("""
    for i in range(2):
        x = f(1)

    def g():
        while True:
            y = 2
    """, recorder)
    assert recorder.seen == [
        "Module", "For", "Name", "Call", "Name", "Integer",  # the header: `i`, `range(2)`
        "Assign", "Name", "Call", "Name", "Integer",  # the body, once
        "FunctionDef", "Name", "Assign", "Name", "Integer",  # the header of `while`: `True`
    ]


def test_the_path_runs_from_the_statement_to_the_visited_node():
    paths = []

    class Paths(_Recorder):
        def visit(self, node: cst.CSTNode) -> None:
            paths.append([type(n).__name__ for n in interpreter.path])

    model = SemanticModel()
    interpreter = Interpreter(model, Evaluator(model), Paths({"Integer"}))
    interpreter.run(cst.parse_module("if c:\n    y = f(1)\n"))
    assert paths == [["Assign", "Call", "Arg", "Integer"]]


def test_the_semantic_package_imports_no_rule_engine_or_front_end():
    for path in SEMANTIC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(("shapecheck.rules", "shapecheck.engine", "shapecheck.frontends")), \
                    f"{path.name} imports {name}"


def test_importing_the_interpreter_loads_no_rule():
    code = "import sys, shapecheck.semantic.interpreter as i; " \
           "print(sorted(m for m in sys.modules if m.startswith(('shapecheck.rules', 'shapecheck.engine'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_node_class_and_tensor_method_has_one_handler():
    assert cst.Call in EXPRESSIONS and METHODS["view"] is METHODS["reshape"]
    with pytest.raises(ValueError, match="two handlers for the tensor method 'view'"):
        method("view")(lambda ev, x, name, args: None)
