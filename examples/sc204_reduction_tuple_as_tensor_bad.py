"""SC204 reduction-tuple-as-tensor: torch.max with a dim returns (values, indices).

Run it: `best * 2` does not double the maxima: it repeats the (values, indices) pair, and
prints a 4-tuple. (`best + 1` would raise TypeError.)
"""

import torch

if __name__ == "__main__":
    logits = torch.randn(4, 10)
    best = torch.max(logits, dim=1)
    print(best * 2)
