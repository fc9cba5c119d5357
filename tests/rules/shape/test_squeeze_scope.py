"""SC205: `squeeze()` without a dim is left alone where the code already knows the shape
(issue 12, item 6): NumPy receivers, shape guards, parameters with known size-1 axes."""

from __future__ import annotations

import textwrap

import pytest
from rule_harness import finding_lines

from shapecheck.rules.catalog import get_rule

RULES = [get_rule("SC205")]


def lines(source: str) -> list[int]:
    return [line for _, line in finding_lines(textwrap.dedent(source), RULES)]


SILENT = {
    "astype": """
        import numpy as np
        def f(mask):
            return mask.astype(np.uint8).squeeze()
        """,
    "numpy_call": """
        import numpy as np
        def f(a):
            arr = np.array(a)
            return arr.squeeze()
        """,
    "numpy_method": """
        def f(t):
            img = t.detach().cpu().numpy()
            return img.squeeze()
        """,
    "numel_guard": """
        def f(x):
            if x.numel() == 1:
                return x.squeeze()
            return x
        """,
    "shape_guard": """
        def f(x):
            if x.shape[0] == 1:
                x = x.squeeze()
            return x
        """,
    "ndim_raise": """
        def f(x):
            if x.ndim != 3:
                raise ValueError("expected (B, 1, T)")
            y = x * 2
            return x.squeeze()
        """,
    "assert_dim": """
        def f(x):
            assert x.dim() == 2 and x.size(1) == 1
            return x.squeeze()
        """,
    # torch/optim/optimizer.py: `_get_value`
    "dim_and_isinstance": """
        import torch
        def _get_value(x):
            if isinstance(x, torch.Tensor) and x.dim() != 0:
                return x.squeeze()
            else:
                return x
        """,
    # transformers' regression heads: both sides lose a batch of one alike
    "squeezed_alike": """
        from torch.nn import MSELoss
        def loss(self, logits, labels):
            if self.num_labels == 1:
                return MSELoss()(logits.squeeze(), labels.squeeze())
            return MSELoss()(logits, labels)
        """,
    # a 1x1 kernel's size-1 axes are known, it has no batch axis
    "parameter_kernel": """
        import torch
        import torch.nn as nn
        class Fuse(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.kernel = nn.Parameter(torch.randn(c, c, 1, 1))
            def matrix(self):
                return self.kernel.squeeze()
        """,
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_silent_where_the_shape_is_known(name):
    assert lines(SILENT[name]) == []


FLAGGED = {
    # the guard is about another tensor
    "other_guard": ("""
        def f(x, y):
            if y.numel() == 1:
                return x.squeeze()
            return x
        """, [4]),
    # a guard that does not exit proves nothing after it
    "guard_without_exit": ("""
        def f(x):
            if x.ndim != 3:
                print("odd")
            return x.squeeze()
        """, [5]),
    # siamese network: a (B, 1) score, B is 1 on a last batch of one
    "model_output": ("""
        def score(model, a, b):
            return model(a, b).squeeze()
        """, [3]),
    # only one side squeezed: `(B,)` against `()` when B is 1
    "one_side": ("""
        import torch.nn.functional as F
        def loss(logits, labels):
            return F.mse_loss(logits.squeeze(), labels)
        """, [4]),
    # a non-parameter whose other dims are unknown
    "gather_column": ("""
        import torch
        def pick(logprob, idx):
            return logprob.gather(1, idx.unsqueeze(1)).squeeze()
        """, [4]),
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_flagged(name):
    source, expected = FLAGGED[name]
    assert lines(source) == expected
