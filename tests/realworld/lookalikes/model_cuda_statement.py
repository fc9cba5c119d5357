"""Look-alike (correct code): `model.cuda()` and `model.to(device)` used as statements.

Source: https://theneuralbase.com/pytorch/learn/beginner/tensor-device-cpu-vs-cuda/
Why it is correct: `nn.Module.cuda()`/`.to()` move the parameters in place, so discarding the return value is fine
(unlike `Tensor.to`)
Verified with torch 2.13 on CPU: demo() runs clean and returns True (verify.py maps .cuda() to the meta device).
"""
import torch
import torch.nn as nn


def evaluate(model, loader):
    model.cuda()
    model.eval()
    outs = []
    with torch.no_grad():
        for x in loader:
            x = x.cuda()
            outs.append(model(x))
    return outs


def demo():
    outs = evaluate(nn.Linear(4, 2), [torch.randn(3, 4)])
    return outs[0].device.type == "meta"
