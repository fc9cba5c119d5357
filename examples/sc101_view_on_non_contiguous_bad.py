"""SC101 view-on-non-contiguous: `.view()` after a transpose raises at run time.

Run it: `python examples/sc101_view_on_non_contiguous_bad.py` ends with
RuntimeError: view size is not compatible with input tensor's size and stride.
"""

import torch


def flatten_heads(attn: torch.Tensor) -> torch.Tensor:
    """(batch, heads, seq, dim) -> (batch, seq, heads * dim)."""
    batch, heads, seq, dim = attn.shape
    return attn.transpose(1, 2).view(batch, seq, heads * dim)


if __name__ == "__main__":
    scores = torch.randn(2, 4, 5, 8)
    print(flatten_heads(scores).shape)
