"""Bug case: inference helper converts model output to NumPy.

Source: https://github.com/XiaMooo/Yolo-Detect-Layer-Visualization/issues/1
What goes wrong: outside `torch.no_grad()` the output requires grad; `.cpu().numpy()` raises
The fix: `.detach().cpu().numpy()`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def predict(model, batch):
    out = model(batch)
    return out.cpu().numpy()


def demo():
    return predict(nn.Linear(3, 2), torch.randn(4, 3)).shape == (4, 2)
