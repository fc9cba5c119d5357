"""SC202 broadcast-mismatch, fixed: give the bias a size-1 column axis.

Run it: prints a 2 x 3 tensor of ones.
"""

import torch

if __name__ == "__main__":
    scores = torch.zeros(2, 3)
    bias = torch.ones(2)
    print(scores + bias[:, None])
