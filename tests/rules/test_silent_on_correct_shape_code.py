"""Correct programs that look like layout, shape or einsum bugs: every SC1xx/SC2xx/SC5xx rule
(opt-in ones included) must stay silent on all of them. Each program also runs under torch."""

from __future__ import annotations

import textwrap

import pytest

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULES = [r for r in all_rules() if r.code.startswith(("SC1", "SC2", "SC5")) and r.code != "SC205"]

TRICKY = {
    "view_after_contiguous": """
        x = torch.randn(4, 6).t().contiguous()
        y = x.view(-1)
    """,
    "view_after_reshape_copy": """
        x = torch.randn(4, 6).t().reshape(24)
        y = x.view(4, 6)
    """,
    "view_split_after_transpose": """
        x = torch.randn(6, 4).t()
        y = x.view(2, 2, 6)
    """,
    "view_merge_adjacent_after_permute": """
        x = torch.rand(32, 32, 3).permute(2, 0, 1)
        y = x.view(3, -1)
    """,
    "view_merge_around_size_one": """
        x = torch.randn(5, 1, 4).transpose(0, 1)
        y = x.view(5, 4)
    """,
    "double_transpose_undoes": """
        x = torch.randn(3, 4).transpose(0, 1).transpose(0, 1)
        y = x.view(12)
    """,
    "view_after_matmul": """
        a = torch.randn(4, 5).t()
        y = (a @ torch.randn(4, 2)).view(-1)
    """,
    "view_after_row_slice": """
        x = torch.randn(6, 4)[2:]
        y = x.view(-1)
    """,
    "view_of_permute_back": """
        x = torch.randn(2, 3, 4).permute(1, 2, 0).permute(2, 0, 1)
        y = x.view(6, 4)
    """,
    "attention_reshape": """
        def merge(x, b, t, h, d):
            y = x.view(b, t, h, d).transpose(1, 2)
            return y.reshape(b, t, h * d)
    """,
    "attention_contiguous_view": """
        def merge(x, b, t, h, d):
            y = x.view(b, t, h, d).transpose(1, 2).contiguous()
            return y.view(b, h, -1)
    """,
    "view_keeps_moved_dims_apart": """
        def split(x, b, t, h, d):
            y = x.view(b, t, h, d).transpose(1, 2)
            return y.view(b, h, t, d)
    """,
    "numpy_dtype_view": """
        import numpy as np
        a = np.zeros((2, 3)).T
        b = a.view(np.float64)
    """,
    "dtype_view_of_tensor": """
        x = torch.zeros(4, 4).t()
        y = x.view(torch.int32)
    """,
    "reshape_single_inferred": """
        x = torch.arange(24)
        y = x.reshape(2, -1, 4)
    """,
    "keepdim_centering": """
        x = torch.randn(16, 8)
        y = x - x.mean(dim=1, keepdim=True)
    """,
    "leading_reduction_centering": """
        x = torch.randn(16, 8)
        y = x - x.mean(dim=0)
    """,
    "leading_two_axes": """
        x = torch.randn(4, 5, 6)
        y = x / x.sum(dim=(0, 1))
    """,
    "reduction_then_unsqueeze": """
        x = torch.randn(16, 8)
        y = x / x.norm(dim=1).unsqueeze(1)
    """,
    "reduction_then_none_index": """
        x = torch.randn(16, 8)
        y = x - x.amax(dim=1)[:, None]
    """,
    "softmax_stable": """
        x = torch.randn(4, 10)
        m = x.max(dim=-1, keepdim=True).values
        y = torch.exp(x - m)
    """,
    "reduction_of_other_tensor": """
        x = torch.randn(8, 8)
        z = torch.randn(3, 8)
        y = x - z.mean(dim=0)
    """,
    "rebound_source": """
        x = torch.randn(4, 6)
        s = x.sum(1)
        x = torch.randn(2, 4)
        y = x * s
    """,
    "one_dim_last_axis": """
        x = torch.randn(8)
        y = x - x.mean(-1)
    """,
    "valid_broadcast_column": """
        a = torch.zeros(2, 3)
        b = torch.zeros(2, 1)
        c = a + b
    """,
    "valid_broadcast_new_axes": """
        a = torch.zeros(5, 1, 4)
        b = torch.zeros(3, 1)
        c = a * b
    """,
    "scalar_tensor_broadcast": """
        a = torch.zeros(2, 3)
        c = a + torch.tensor(1.0)
    """,
    "jaxtyping_same_names": """
        from jaxtyping import Float
        def f(x: Float[torch.Tensor, "b c"], y: Float[torch.Tensor, "c"]) -> Float[torch.Tensor, "b c"]:
            return x * y
    """,
    "jaxtyping_name_vs_int": """
        from jaxtyping import Float
        def f(x: Float[torch.Tensor, "b c"]):
            return x + torch.ones(3)
    """,
    "matmul_batched": """
        a = torch.randn(7, 2, 3)
        b = torch.randn(3, 4)
        c = a @ b
    """,
    "matmul_vector": """
        a = torch.randn(2, 3)
        c = a @ torch.randn(3)
    """,
    "linear_on_right_features": """
        import torch.nn as nn
        fc = nn.Linear(8, 2)
        y = fc(torch.randn(5, 3, 8))
    """,
    "max_unpacked": """
        x = torch.randn(4, 5)
        values, indices = torch.max(x, dim=1)
        y = values * 2
    """,
    "max_without_dim_is_tensor": """
        x = torch.randn(4, 5)
        y = torch.max(x) + 1
    """,
    "elementwise_max": """
        x = torch.randn(4, 5)
        y = torch.max(x, torch.zeros(4, 5)) * 2
    """,
    "topk_values": """
        x = torch.randn(4, 5)
        y = x.topk(2, dim=1).values.sum()
    """,
    "numpy_max_axis": """
        import numpy as np
        def f(a):
            return a.max(1) * 2
    """,
    "einsum_matmul": """
        c = torch.einsum("ij,jk->ik", torch.randn(2, 3), torch.randn(3, 4))
    """,
    "einsum_implicit_output": """
        c = torch.einsum("ij,jk", torch.randn(2, 3), torch.randn(3, 4))
    """,
    "einsum_trace": """
        c = torch.einsum("ii", torch.randn(3, 3))
    """,
    "einsum_ellipsis": """
        c = torch.einsum("...ij,...jk->...ik", torch.randn(5, 2, 3), torch.randn(3, 4))
    """,
    "einsum_spaces": """
        c = torch.einsum("b i d, b j d -> b i j", torch.randn(2, 3, 4), torch.randn(2, 5, 4))
    """,
    "einsum_list_operands": """
        ops = [torch.randn(2, 3), torch.randn(3, 4)]
        c = torch.einsum("ij,jk->ik", ops)
    """,
    "einsum_broadcast_one": """
        c = torch.einsum("ij,ij->ij", torch.randn(1, 4), torch.randn(3, 4))
    """,
    "einsum_uppercase": """
        c = torch.einsum("Ab,bC->AC", torch.randn(2, 3), torch.randn(3, 4))
    """,
    "einsum_outer": """
        c = torch.einsum("i,j->ij", torch.arange(3.0), torch.arange(4.0))
    """,
    "view_size_matches": """
        x = torch.zeros(2, 3, 4)
        y = x.view(6, -1)
        z = x.view(24)
    """,
    "return_annotation_variadic": """
        from jaxtyping import Float
        def f(x: Float[torch.Tensor, "*batch c"]) -> Float[torch.Tensor, "*batch"]:
            return x.sum(-1)
    """,
    "cat_with_keepdim": """
        x = torch.randn(2, 3)
        s = x.sum(1, keepdim=True)
        y = torch.cat([x, s], dim=1)
    """,
    "where_with_leading_reduction": """
        x = torch.randn(4, 3)
        y = torch.where(x > 0, x, x.mean(0))
    """,
}


def _program(body: str) -> str:
    return "import torch\n" + textwrap.dedent(body)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_correct_program_is_silent(name):
    found = lint_text(_program(TRICKY[name]), RULES)
    assert [f"{d.line}:{d.column} {d.code} {d.message}" for d in found] == []


def test_there_are_at_least_thirty():
    assert len(TRICKY) >= 30


def test_the_programs_really_run():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    for name, body in TRICKY.items():
        namespace = {"torch": torch, "np": np}
        exec(compile(_program(body), name, "exec"), namespace)
        for fn_name in ("merge", "split"):
            fn = namespace.get(fn_name)
            if callable(fn):
                fn(torch.randn(2, 3, 4 * 5), 2, 3, 4, 5)
