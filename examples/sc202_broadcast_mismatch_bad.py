"""SC202 broadcast-mismatch: (2, 3) + (2,) cannot broadcast.

Run it: ends with RuntimeError: The size of tensor a (3) must match the size of tensor b (2).
"""

import torch

if __name__ == "__main__":
    scores = torch.zeros(2, 3)
    bias = torch.ones(2)
    print(scores + bias)
