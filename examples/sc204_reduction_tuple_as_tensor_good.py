"""SC204 reduction-tuple-as-tensor, fixed: unpack the pair.

Run it: prints the doubled maxima and their positions.
"""

import torch

if __name__ == "__main__":
    logits = torch.randn(4, 10)
    best, where = torch.max(logits, dim=1)
    print(best * 2, where)
