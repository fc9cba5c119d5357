"""Bug case: single example passed to an einsum written for batches.

Source: https://github.com/vvvb-github/AVSegFormer/issues/9
What goes wrong: `x[0]` drops the batch axis; the 3-subscript operand "bnd" gets a 2-D tensor and einsum raises
The fix: keep the batch axis with `x[:1]`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def project_tokens(x, w):
    return torch.einsum("bnd,de->bne", x, w)


def first_example_projection(x, w):
    return project_tokens(x[0], w)


def demo():
    out = first_example_projection(torch.randn(4, 3, 5), torch.randn(5, 2))
    return tuple(out.shape) == (1, 3, 2)
