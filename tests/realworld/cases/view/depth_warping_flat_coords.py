"""Bug case: depth warping flattens projected pixel coordinates into (N, 3) rows.

Source: https://github.com/lppllppl920/EndoscopyDepthEstimation-Pytorch/issues/13
What goes wrong: the projected points are permuted to (B, H, W, 3); `.view(-1, 3)` must merge the batch dim with H
and W, which the permute made impossible, and raises
The fix: `.reshape(-1, 3)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def depth_warping(depth_map, rotation, translation):
    b, _, h, w = depth_map.shape
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
    pts = torch.stack([xs, ys, torch.ones_like(xs)], dim=0).view(1, 3, -1) * depth_map.view(b, 1, -1)
    proj = torch.bmm(rotation, pts) + translation.view(b, 3, 1)
    proj = proj.view(b, 3, h, w).permute(0, 2, 3, 1)
    uv_flat = proj.view(-1, 3)
    return uv_flat[:, :2] / uv_flat[:, 2:].clamp(min=1e-6)


def demo():
    depth = torch.rand(2, 1, 3, 4) + 1
    rot = torch.eye(3).expand(2, 3, 3)
    trans = torch.zeros(2, 3)
    return tuple(depth_warping(depth, rot, trans).shape) == (24, 2)
