"""Look-alike (correct code): sentence embeddings stacked with torch.stack.

Source: https://github.com/XuecaiHu/Meta-SR-Pytorch/issues/60
Why it is correct: `torch.stack` joins a list of equally shaped tensors
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def embed_sentences(encoder, sentences):
    return torch.stack([encoder(s).mean(0) for s in sentences])


def demo():
    with torch.no_grad():
        out = embed_sentences(nn.Linear(3, 5), [torch.randn(4, 3), torch.randn(2, 3)])
    return tuple(out.shape) == (2, 5)
