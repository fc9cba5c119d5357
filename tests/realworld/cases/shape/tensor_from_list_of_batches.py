"""Bug case: collecting per-batch logits with torch.tensor(list_of_tensors).

Source: https://github.com/CRIPAC-DIG/DGSR/issues/14
What goes wrong: each list element is a multi-element tensor; `torch.tensor(outputs)` raises "only one element
tensors can be converted to Python scalars"
The fix: `torch.cat(outputs)`
Verified with torch 2.13 on CPU: demo() raises ValueError.
"""
import torch
import torch.nn as nn


def predict_all(model, loader):
    outputs = []
    with torch.no_grad():
        for x in loader:
            outputs.append(model(x))
    return torch.tensor(outputs)


def demo():
    out = predict_all(nn.Linear(3, 2), [torch.randn(4, 3), torch.randn(4, 3)])
    return tuple(out.shape) == (8, 2)
