"""SC998 unused-noqa (opt-in): the suppression outlived the bug it was written for.

`.reshape()` replaced `.view()` long ago, yet the comment still silences SC101 on this line,
and would hide a real SC101 if the line changed again. Run
`shapecheck lint --extend-select SC998 examples/sc998_unused_noqa_bad.py` to see it.
"""

import torch


def flatten_heads(attn: torch.Tensor) -> torch.Tensor:
    """(batch, heads, seq, dim) -> (batch, seq, heads * dim)."""
    batch, heads, seq, dim = attn.shape
    return attn.transpose(1, 2).reshape(batch, seq, heads * dim)  # noqa: SC101


if __name__ == "__main__":
    scores = torch.randn(2, 4, 5, 8)
    print(flatten_heads(scores).shape)
