"""Bug case: stacking sentence embeddings with torch.FloatTensor(list).

Source: https://github.com/XuecaiHu/Meta-SR-Pytorch/issues/60
What goes wrong: `torch.FloatTensor(embs)` with a list of 1-D tensors raises "only one element tensors can be
converted to Python scalars"
The fix: `torch.stack(embs)`
Verified with torch 2.13 on CPU: demo() raises ValueError.
"""
import torch
import torch.nn as nn


def embed_sentences(encoder, sentences):
    embs = [encoder(s).mean(0) for s in sentences]
    return torch.FloatTensor(embs)


def demo():
    enc = nn.Linear(3, 5)
    with torch.no_grad():
        out = embed_sentences(enc, [torch.randn(4, 3), torch.randn(2, 3)])
    return tuple(out.shape) == (2, 5)
