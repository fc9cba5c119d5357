"""SC101 view-on-non-contiguous, fixed: `.reshape()` copies when a view is impossible.

Run it: `python examples/sc101_view_on_non_contiguous_good.py` prints torch.Size([2, 5, 32]).
"""

import torch


def flatten_heads(attn: torch.Tensor) -> torch.Tensor:
    """(batch, heads, seq, dim) -> (batch, seq, heads * dim)."""
    batch, heads, seq, dim = attn.shape
    return attn.transpose(1, 2).reshape(batch, seq, heads * dim)


if __name__ == "__main__":
    scores = torch.randn(2, 4, 5, 8)
    print(flatten_heads(scores).shape)
