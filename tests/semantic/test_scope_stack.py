"""The scope stack: frames pushed and popped for functions and classes, what a method keeps of
its class, what a new function inherits from the module, and joins of bindings."""

from __future__ import annotations

import libcst as cst
import pytest

from shapecheck.semantic.facts import CPU, LEAF_REQUIRES_GRAD, MODULE, TENSOR, Fact
from shapecheck.semantic.scopes import (
    CLASS_SCOPE, FUNCTION_SCOPE, MODULE_SCOPE, ScopeStack, exportable, exported, global_view, merge,
)
from shapecheck.shapes import Shape


def _def(source: str) -> cst.FunctionDef:
    node = cst.parse_statement(source)
    assert isinstance(node, cst.FunctionDef)
    return node


def _class(source: str) -> cst.ClassDef:
    node = cst.parse_statement(source)
    assert isinstance(node, cst.ClassDef)
    return node


def test_the_module_frame_is_the_bottom_and_is_never_popped():
    scopes = ScopeStack()
    assert scopes.top is scopes.module and scopes.module.kind == MODULE_SCOPE and scopes.depth == 0
    assert (scopes.top.function, scopes.top.class_def, scopes.top.grad) == (None, None, [True])
    with pytest.raises(IndexError):
        scopes.pop()


def test_a_function_frame_starts_afresh_and_popping_restores_the_enclosing_one():
    scopes = ScopeStack()
    scopes.top.env["x"] = Fact(kind=TENSOR)
    scopes.top.loops.append(cst.parse_statement("while x:\n    pass\n"))
    fn = _def("def f():\n    pass\n")
    frame = scopes.push_function(fn, {"y": Fact(kind=TENSOR)}, False)
    assert scopes.top is frame and frame.kind == FUNCTION_SCOPE and scopes.depth == 1
    assert frame.function is fn and frame.class_def is None and frame.in_module_class is None
    assert frame.loops == [] and frame.grad == [False] and set(frame.env) == {"y"}
    assert scopes.pop() is frame
    assert scopes.top is scopes.module and set(scopes.top.env) == {"x"} and len(scopes.top.loops) == 1


def test_a_method_keeps_its_class_and_knows_forward_of_a_module_class():
    scopes = ScopeStack()
    net = _class("class Net(nn.Module):\n    pass\n")
    scopes.push_class(net, True, set(), True)
    assert scopes.method_class() is net
    forward = scopes.push_function(_def("def forward(self, x):\n    pass\n"), {}, True)
    assert (forward.class_def, forward.in_module_class, forward.in_forward) == (net, True, True)
    inner = scopes.push_function(_def("def helper():\n    pass\n"), {}, True)
    assert (inner.function.name.value, inner.class_def, inner.in_module_class, inner.in_forward) == \
        ("helper", None, None, False)
    scopes.pop()
    scopes.pop()
    other = scopes.push_function(_def("def run(self):\n    pass\n"), {}, True)
    assert (other.class_def, other.in_module_class, other.in_forward) == (net, True, False)


def test_forward_of_a_plain_class_is_not_in_forward():
    scopes = ScopeStack()
    scopes.push_class(_class("class Plain:\n    pass\n"), False, set(), True)
    frame = scopes.push_function(_def("def forward(self):\n    pass\n"), {}, True)
    assert (frame.in_module_class, frame.in_forward) == (False, False)


def test_a_def_after_a_join_in_a_class_body_is_not_a_method():
    scopes = ScopeStack()
    scopes.push_class(_class("class C:\n    pass\n"), False, set(), True)
    scopes.top.env = dict(scopes.top.env)  # what an `if` of the class body leaves behind
    assert scopes.method_class() is None
    assert scopes.push_function(_def("def f(self):\n    pass\n"), {}, True).class_def is None


def test_a_class_frame_keeps_the_enclosing_function_and_starts_new_loops():
    scopes = ScopeStack()
    scopes.push_class(_class("class Net(nn.Module):\n    pass\n"), True, set(), True)
    forward = scopes.push_function(_def("def forward(self):\n    pass\n"), {}, False)
    forward.loops.append(cst.parse_statement("for i in x:\n    pass\n"))
    local = _class("class Local:\n    pass\n")
    frame = scopes.push_class(local, None, {"self.w"}, True)
    assert frame.kind == CLASS_SCOPE and frame.function is forward.function and frame.in_forward
    assert frame.class_def is local and frame.in_module_class is None and frame.loops == []
    assert frame.grad == [True] and frame.rebound_attrs == {"self.w"}
    assert frame.loop_exits is forward.loop_exits


def test_a_function_inherits_the_module_names_bound_once_at_any_depth():
    scopes = ScopeStack()
    w = Fact(kind=TENSOR, shape=Shape((2, 3)))
    scopes.module.env.update({"W": w, "V": Fact(kind=TENSOR), "model": Fact(kind=MODULE, device=CPU)})
    scopes.push_function(_def("def outer():\n    pass\n"), {"a": Fact(kind=TENSOR)}, True)
    scopes.push_class(_class("class Local:\n    pass\n"), False, set(), True)
    env = scopes.inherited_bindings({"W", "model", "missing"}, global_view)
    assert set(env) == {"W", "model"}
    assert env["W"] is w and env["model"].device is None


def test_a_function_inherits_the_module_bindings_of_the_current_path():
    scopes = ScopeStack()
    scopes.module.env["W"] = Fact(kind=TENSOR)
    branch = Fact(kind=TENSOR, shape=Shape((4,)))
    scopes.module.env = {"W": branch}  # inside an `if` at module level
    assert scopes.inherited_bindings({"W"}, lambda f: f) == {"W": branch}


def test_merge_keeps_the_names_bound_on_every_path_with_joined_facts():
    a, b = Fact(kind=TENSOR, shape=Shape((2,))), Fact(kind=TENSOR, shape=Shape((3,)))
    env = {"x": a, "y": a}
    assert merge([env]) is env
    joined = merge([{"x": a, "y": a}, {"x": b}])
    assert set(joined) == {"x"} and joined["x"].kind == TENSOR and joined["x"].shape == Shape((None,))
    assert merge([{"x": a}, {"x": a}])["x"] is a


def test_views_of_facts_across_scopes():
    symbolic = Fact(kind=TENSOR, shape=Shape(("b", 3)), device=CPU, is_scalar_cpu=True)
    assert global_view(symbolic).shape == Shape((None, 3)) and global_view(symbolic).device == CPU
    module = Fact(kind=MODULE, device=CPU, params=("weight",), trainable=True)
    assert (global_view(module).device, global_view(module).params, global_view(module).trainable) == \
        (None, None, True)
    seen = exported(symbolic)
    assert (seen.shape, seen.device, seen.is_scalar_cpu) == (Shape((None, 3)), None, False)
    assert exportable(module) and exportable(Fact(kind=TENSOR, grad=LEAF_REQUIRES_GRAD))
    assert not exportable(Fact(kind=TENSOR)) and not exportable(Fact())
