"""Look-alike (correct code): ViT patch embedding permutes to channels-last and views (B, H*W, C).

Source: https://velog.io/@damab/pytorch-Contiguous-tensors
Why it is correct: after `permute(0, 2, 3, 1)` the H and W dims still satisfy the stride rule (stride[H] ==
stride[W] * W), so merging them with `view` is legal; C stays its own dim
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class PatchEmbed(nn.Module):
    def __init__(self, patch_size=4, in_chans=3, embed_dim=32):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        x = self.proj(x)
        B, C, H, W = x.shape
        return x.permute(0, 2, 3, 1).view(B, -1, C)


def demo():
    tokens = PatchEmbed()(torch.randn(2, 3, 16, 16))
    return tuple(tokens.shape) == (2, 16, 32)
