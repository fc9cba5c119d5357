"""Bug case: audio-visual fusion squeezes the audio feature before a batched einsum.

Source: https://github.com/vvvb-github/AVSegFormer/issues/9
What goes wrong: `x.squeeze()` removes the batch axis when the batch holds one clip; "bchw,bc->bchw" then gets a 1-D
operand and raises
The fix: `x.squeeze(-1)` (drop only the singleton feature axis)
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class FusionBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.audio_proj = nn.Linear(c, c)

    def forward(self, feature_map, audio_feat):
        x = self.audio_proj(audio_feat).unsqueeze(-1)
        fusion_map = torch.einsum("bchw,bc->bchw", feature_map, x.squeeze())
        return feature_map + fusion_map


def demo():
    out = FusionBlock(4)(torch.randn(1, 4, 3, 3), torch.randn(1, 4))
    return tuple(out.shape) == (1, 4, 3, 3)
