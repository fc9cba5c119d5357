"""The tables of shapecheck.rules.torch_ops, checked against torch itself.

Run as a script (``python tests/test_rules_autograd_saved_table.py``) to print what torch saves
for each op; as a test, every entry of the tables is compared with torch. Skipped without torch.
"""

from __future__ import annotations

import pytest

from shapecheck.rules import torch_ops

torch = pytest.importorskip("torch") if __name__ != "__main__" else __import__("torch")


def _saved(out, named: dict) -> frozenset:
    """The roles in ``named`` whose tensor ``out.grad_fn`` holds in a ``_saved_*`` slot."""
    roles = set()
    fn = out.grad_fn
    for attr in dir(fn):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(fn, attr)
        except RuntimeError:
            continue
        if isinstance(value, torch.Tensor):
            for role, tensor in named.items():
                if value.data_ptr() == tensor.data_ptr() and value.shape == tensor.shape:
                    roles.add(role)
    return frozenset(roles)


def _operand(requires_grad: bool, shape=(3, 3)):
    """A positive tensor; when it requires grad, a non-leaf so that it can be told apart."""
    base = torch.rand(*shape) + 0.5
    if not requires_grad:
        return base
    return base.requires_grad_() * 1


def probe_unary(op: str) -> frozenset:
    """What ``op`` saves when its input requires grad."""
    x = _operand(True)
    fn = getattr(torch, op, None) or getattr(torch.nn.functional, op)
    if op in ("softmax", "log_softmax"):
        out = fn(x, -1)
    elif op == "clamp":
        out = fn(x, 0.6, 1.2)
    else:
        out = fn(x)
    return _saved(out, {torch_ops.SELF: x, torch_ops.RESULT: out})


def probe_binary(op: str, self_grad: bool, other_grad: bool) -> frozenset:
    """What ``op`` saves for two tensor operands with these grad states."""
    shape = {"bmm": (2, 3, 3), "dot": (3,)}.get(op, (3, 3))
    a, b = _operand(self_grad, shape), _operand(other_grad, shape)
    out = getattr(torch, op)(a, b)
    return _saved(out, {torch_ops.SELF: a, torch_ops.OTHER: b, torch_ops.RESULT: out})


def probe_scalar(op: str) -> frozenset:
    """What ``tensor <op> 2.0`` saves when the tensor requires grad."""
    x = _operand(True)
    out = getattr(torch, op)(x, 2.0)
    return _saved(out, {torch_ops.SELF: x, torch_ops.RESULT: out})


@pytest.mark.parametrize("op", sorted(torch_ops.UNARY_SAVES))
def test_unary_table_matches_torch(op):
    assert probe_unary(op) == torch_ops.UNARY_SAVES[op]


@pytest.mark.parametrize("op", sorted(torch_ops.BINARY_SAVES))
def test_binary_table_matches_torch(op):
    for (self_grad, other_grad), expected in torch_ops.BINARY_SAVES[op].items():
        assert probe_binary(op, self_grad, other_grad) == expected, (op, self_grad, other_grad)


@pytest.mark.parametrize("op", sorted(torch_ops.SCALAR_SAVES))
def test_scalar_table_matches_torch(op):
    assert probe_scalar(op) == torch_ops.SCALAR_SAVES[op]


def test_operators_call_the_tabled_ops():
    a, b = _operand(True), _operand(True)
    assert probe_binary("mul", True, True) == _saved(a * b, {"self": a, "other": b})
    assert _saved(a @ b, {"self": a, "other": b}) == torch_ops.BINARY_SAVES["matmul"][(True, True)]
    assert _saved(a ** 2, {"self": a}) == torch_ops.SCALAR_SAVES["pow"]
    assert _saved(a * 2, {"self": a}) == frozenset()


def test_inplace_table_is_every_underscore_method():
    public = {m for m in dir(torch.Tensor) if m.endswith("_") and not m.startswith("_")}
    assert torch_ops.INPLACE_METHODS | torch_ops.NOT_INPLACE_UNDERSCORE >= public
    assert torch_ops.INPLACE_METHODS <= public


@pytest.mark.parametrize("method,args", [
    ("add_", (1,)), ("mul_", (2,)), ("zero_", ()), ("fill_", (0.0,)), ("relu_", ()),
    ("clamp_", (0, 1)), ("normal_", ()), ("uniform_", ()), ("copy_", None), ("t_", ()),
])
def test_inplace_methods_fail_on_a_leaf_requiring_grad(method, args):
    w = torch.randn(2, 2, requires_grad=True)
    args = (torch.zeros(2, 2),) if args is None else args
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(w, method)(*args)
    with torch.no_grad():
        getattr(w, method)(*args)


def test_not_inplace_methods_are_fine_on_a_leaf():
    w = torch.randn(2, 2, requires_grad=True)
    w.requires_grad_()
    w.share_memory_()
    w.detach_()


def test_functional_inplace_tables():
    F = torch.nn.functional
    for name in torch_ops.FUNCTIONAL_INPLACE | torch_ops.FUNCTIONAL_INPLACE_KW:
        assert hasattr(F, name), name
    for name in torch_ops.FUNCTIONAL_LOSSES:
        assert hasattr(F, name), name
    for name in torch_ops.FACTORIES:
        assert hasattr(torch, name), name


def test_python_bool_results_return_bools():
    x = torch.randn(2, 3)
    assert isinstance(torch.equal(x, x), bool) and isinstance(torch.allclose(x, x), bool)
    assert isinstance(x.is_contiguous(), bool) and isinstance(torch.is_tensor(x), bool)
    for name in torch_ops.PYTHON_BOOL_RESULTS:
        assert hasattr(torch, name) or hasattr(torch.Tensor, name), name


def test_index_pair_ops_return_indices():
    x = torch.randn(4, 3)
    for op in torch_ops.INDEX_PAIR_OPS:
        fn = getattr(x, op)
        result = fn(2) if op == "topk" else (fn(1, 1) if op == "kthvalue" else fn(1))
        assert result.indices.dtype == torch.int64, op


if __name__ == "__main__":
    for op in sorted(torch_ops.UNARY_SAVES):
        print(f"{op:12} saves {sorted(probe_unary(op))}")
    for op in sorted(torch_ops.BINARY_SAVES):
        for key in ((True, True), (True, False), (False, True)):
            print(f"{op:12} requires_grad={key} saves {sorted(probe_binary(op, *key))}")
    for op in sorted(torch_ops.SCALAR_SAVES):
        print(f"{op:12} with a Python number saves {sorted(probe_scalar(op))}")
