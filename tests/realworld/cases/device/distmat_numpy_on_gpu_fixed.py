"""Fixed twin: re-id demo converts the GPU distance matrix with .numpy().

Source: https://github.com/JDAI-CV/fast-reid/pull/509
What goes wrong: the features were computed on the GPU; `distmat.numpy()` raises "can't convert cuda:0 device type
tensor to numpy"
The fix: `distmat.cpu().numpy()`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn.functional as F


def compute_distmat(query_feats, gallery_feats):
    q = F.normalize(query_feats.cuda(), dim=1)
    g = F.normalize(gallery_feats.cuda(), dim=1)
    distmat = 1 - torch.mm(q, g.t())
    return distmat.cpu().numpy()


def demo():
    try:
        compute_distmat(torch.randn(3, 8), torch.randn(5, 8))
    except NotImplementedError:
        return True
    return True
