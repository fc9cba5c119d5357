"""Look-alike (correct code): batched matrix-vector products with an ellipsis einsum.

Source: https://github.com/grimme-lab/dxtb/issues/67
Why it is correct: the ellipsis covers the batch dims of both operands, which agree
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def shell_potential(mat, charges):
    return torch.einsum("...ik,...k->...i", mat, charges)


def demo():
    out = shell_potential(torch.randn(6, 5, 5), torch.randn(6, 5))
    return tuple(out.shape) == (6, 5)
