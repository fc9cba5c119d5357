"""SC998 unused-noqa, fixed: the stale suppression is gone; a comment that still silences a
finding (here a deliberate view of a transposed tensor, kept to show the error) stays.

Run it: `python examples/sc998_unused_noqa_good.py` prints torch.Size([2, 5, 32]).
"""

import torch


def flatten_heads(attn: torch.Tensor) -> torch.Tensor:
    """(batch, heads, seq, dim) -> (batch, seq, heads * dim)."""
    batch, heads, seq, dim = attn.shape
    return attn.transpose(1, 2).reshape(batch, seq, heads * dim)


def fails_on_purpose() -> None:
    """Shows the error `.view()` raises on a transposed tensor."""
    x = torch.randn(3, 4)
    try:
        x.t().view(12)  # noqa: SC101
    except RuntimeError as exc:
        print("view failed as expected:", exc)


if __name__ == "__main__":
    scores = torch.randn(2, 4, 5, 8)
    print(flatten_heads(scores).shape)
