"""Annotated functions and a module class, written as user code would be."""

from __future__ import annotations

import torch
from jaxtyping import Float
from torch import Tensor


def scale_channels(
    x: Float[Tensor, "batch channels"], weight: Float[Tensor, "channels"]
) -> Float[Tensor, "batch channels"]:
    """Multiply each channel by its weight (a wrong-length weight of size 1 broadcasts silently)."""
    return x * weight


def attention_scores(q: Float[Tensor, "b s d"], k: Float[Tensor, "b t d"]) -> Float[Tensor, "b s t"]:
    """Scaled dot-product scores."""
    return q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5


def plain(x, y):
    """No annotations: left alone."""
    return x + y


class Projection(torch.nn.Module):
    """A linear projection whose forward is annotated."""

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(d_out, d_in))

    def forward(self, x: Float[Tensor, "*batch d_in"]) -> Float[Tensor, "*batch d_out"]:
        return x @ self.weight.T

    @staticmethod
    def pairwise(a: Float[Tensor, "n d"], b: Float[Tensor, "m d"]) -> Float[Tensor, "n m"]:
        return a @ b.T
