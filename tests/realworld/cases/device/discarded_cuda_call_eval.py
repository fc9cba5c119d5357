"""Bug case: evaluation loop calls `images.cuda()` without keeping the result.

Source: https://github.com/syuu1987/geekTime-semantic-segmentation/issues/1
What goes wrong: `images.cuda()` returns a copy on the GPU that is discarded; the CPU batch reaches the GPU model
and raises
The fix: `images = images.cuda()`
Verified with torch 2.13 on CPU: demo() raises RuntimeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import torch
import torch.nn as nn


def evaluate(model, loader):
    model.cuda()
    model.eval()
    preds = []
    with torch.no_grad():
        for images, _ in loader:
            images.cuda()
            preds.append(model(images).argmax(1))
    return preds


def demo():
    evaluate(nn.Linear(6, 2), [(torch.randn(3, 6), None)])
    return True
