"""Scopes as the walk sees them: what a function sees of the module and of enclosing functions,
comprehension and lambda names, ``global``, and the ``self.x`` facts ``__init__`` exports."""

from __future__ import annotations

from semantic_probe import facts, one, reveal, summary

from shapecheck.semantic.facts import INT, MODULE, NON_LEAF, TENSOR
from shapecheck.shapes import format_shape


def test_comprehension_targets_shadow_outer_names():
    code = """
    import torch
    x = torch.zeros(2, 3)
    ys = [reveal(x) for x in range(3)]
    """
    assert one(code).kind == INT  # an element of the range, not the outer tensor


def test_globals_rebound_elsewhere_are_not_trusted():
    code = """
    import torch
    x = torch.zeros(3, 4)
    y = torch.zeros(3, 4)

    def g():
        global y
        y = y.t()

    def f():
        reveal(x)
        reveal(y)
    """
    x, y = [f for f, _ in reveal(code)]
    assert format_shape(x.shape) == "(3, 4)" and y.shape is None


def test_attributes_rebound_outside_init_are_not_exported():
    code = """
    import torch.nn as nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.g = nn.Linear(3, 4)

        def prune(self):
            self.fc = nn.Linear(2, 4)

        def forward(self, x):
            reveal(self.fc)
            reveal(self.g)
    """
    fc, g = [f for f, _ in reveal(code)]
    assert fc.kind is None and g.features == (3, 4)


def test_a_nested_function_sees_module_level_names():
    code = """
    import torch
    W = torch.zeros(2, 3)

    def outer():
        reveal(W)

        def inner():
            reveal(W)

            def innermost():
                reveal(W)
        return inner
    """
    seen = reveal(code)
    assert [format_shape(f.shape) for f, _ in seen] == ["(2, 3)", "(2, 3)", "(2, 3)"]
    assert [flags["function"] for _, flags in seen] == ["outer", "inner", "innermost"]


def test_a_nested_function_does_not_see_a_module_name_bound_twice():
    code = """
    import torch
    V = torch.zeros(4)
    V = torch.zeros(5)
    U = torch.zeros(2)
    if flag:
        U = torch.zeros(3)

    def outer():
        def inner():
            reveal(V)
            reveal(U)
    """
    assert [f.kind for f, _ in reveal(code)] == [None, None]


def test_a_nested_function_does_not_see_a_name_another_function_declares_global():
    code = """
    import torch
    W = torch.zeros(2, 3)

    def reset():
        global W
        W = None

    def outer():
        def inner():
            reveal(W)
    """
    assert one(code).kind is None


def test_a_nested_function_does_not_see_the_locals_of_the_enclosing_function():
    # a closure reads `a` when it is called, and by then `a` may be bound to something else
    code = """
    import torch

    def outer():
        a = torch.zeros(2)

        def inner():
            reveal(a)
        a = torch.zeros(3)
        return inner
    """
    assert one(code).kind is None


def test_a_function_sees_module_level_names_as_they_are_when_the_def_runs():
    code = """
    import torch

    def outer():
        def inner():
            reveal(LATER)
        reveal(EARLIER)

    LATER = torch.zeros(2)
    EARLIER = torch.zeros(2)
    """
    assert [f.kind for f, _ in reveal(code)] == [None, None]


def test_methods_of_a_class_in_a_function_see_module_level_names():
    code = """
    import torch
    W = torch.zeros(2, 3)

    def build():
        class Local:
            def run(self):
                reveal(W)

                def helper():
                    reveal(W)
        return Local
    """
    seen = reveal(code)
    assert [format_shape(f.shape) for f, _ in seen] == ["(2, 3)", "(2, 3)"]
    assert [(flags["function"], flags["class"]) for _, flags in seen] == [("run", "Local"), ("helper", None)]


def test_a_function_nested_in_a_method_sees_module_level_names():
    code = """
    import torch
    W = torch.zeros(2, 3)

    class Model:
        def forward(self):
            def helper():
                reveal(W)
    """
    assert format_shape(one(code).shape) == "(2, 3)"


def test_a_module_level_module_seen_from_a_nested_function_has_no_device():
    code = """
    model = nn.Linear(3, 2)
    def outer():
        def inner(x):
            seen = model  # reveal() is an unknown function: it could change a module passed to it
            reveal(seen)
            reveal(model(x))
    model.cuda()
    """
    assert [summary(f) for f in facts(code)] == [(MODULE, None, True), (TENSOR, None, NON_LEAF)]


def test_annotation_names_of_a_module_level_tensor_mean_nothing_in_a_nested_function():
    code = """
    import torch
    from jaxtyping import Float
    X: Float[torch.Tensor, "b 3"] = make()

    def outer():
        reveal(X)

        def inner():
            reveal(X)
    """
    assert [format_shape(f.shape) for f, _ in reveal(code)] == ["(?, 3)", "(?, 3)"]
