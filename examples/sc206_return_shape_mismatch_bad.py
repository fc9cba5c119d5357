"""SC206 return-shape-mismatch: pooling over the wrong axis breaks the annotation's promise.

Run it: prints torch.Size([2, 7]) although the function promises (batch, channels) = (2, 3).
"""

import torch
from jaxtyping import Float
from torch import Tensor


def pool(x: Float[Tensor, "batch time channels"]) -> Float[Tensor, "batch channels"]:
    """Average over time."""
    return x.mean(dim=2)


if __name__ == "__main__":
    print(pool(torch.randn(2, 7, 3)).shape)
