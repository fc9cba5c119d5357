"""Fixed twin: copying merged conv weights into a layer by slice assignment.

Source: https://github.com/PingoLH/FCHarDNet/issues/61
What goes wrong: `cconv.weight[:, :, :, :] = W` writes through a view of a leaf parameter and raises
The fix: `with torch.no_grad(): cconv.weight.copy_(W)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def fuse_into(cconv, W):
    with torch.no_grad():
        cconv.weight.copy_(W)
    return cconv


def demo():
    conv = nn.Conv2d(2, 3, 3)
    W = torch.randn(3, 2, 3, 3)
    return torch.equal(fuse_into(conv, W).weight.detach(), W)
