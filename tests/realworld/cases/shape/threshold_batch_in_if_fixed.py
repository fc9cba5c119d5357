"""Fixed twin: binary classifier decides with `if output > 0.5` on a whole batch.

Source: https://github.com/RussellTsuchida/snefy/issues/1
What goes wrong: `output > 0.5` is a tensor with one value per example; `if` on it raises "Boolean value of Tensor
with more than one value is ambiguous"
The fix: vectorise with `(output > 0.5).long()`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def predict(model, data):
    output = torch.sigmoid(model(data)).squeeze(1)
    return (output > 0.5).long()


def demo():
    return tuple(predict(nn.Linear(3, 1), torch.randn(4, 3)).shape) == (4,)
