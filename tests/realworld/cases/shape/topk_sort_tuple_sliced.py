"""Bug case: keeping the top-k scores after torch.sort.

Source: https://github.com/OpenMined/PySyft/issues/4717
What goes wrong: `torch.sort(...)` returns (values, indices); slicing the named tuple with `[:, :k]` raises
TypeError
The fix: unpack `values, _ = torch.sort(...)`
Verified with torch 2.13 on CPU: demo() raises TypeError.
"""
import torch


def topk_mean(scores, k):
    sorted_scores = torch.sort(scores, dim=1, descending=True)
    return sorted_scores[:, :k].mean(dim=1)


def demo():
    return tuple(topk_mean(torch.randn(4, 9), 3).shape) == (4,)
