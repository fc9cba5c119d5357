"""Bug case: padding mask expanded over heads and flattened with view.

Source: https://github.com/coreylammie/MemTorch/issues/23
What goes wrong: `expand` gives the head dimension stride 0; `.view(-1, t)` must merge it with the batch dim and
raises
The fix: `.reshape(-1, t)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def head_mask(padding_mask, n_heads):
    b, t = padding_mask.shape
    mask = padding_mask.unsqueeze(1).expand(b, n_heads, t)
    return mask.view(-1, t)


def demo():
    m = head_mask(torch.tensor([[1, 1, 0], [1, 0, 0]]), 4)
    return tuple(m.shape) == (8, 3)
