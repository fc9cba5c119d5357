"""Bug case: plotting an embedding vector straight from the model's weights.

Source: https://github.com/tkalayci71/embedding-inspector/issues/22
What goes wrong: the weight requires grad; `emb_vec.numpy()` raises "Can't call numpy() on Tensor that requires
grad"
The fix: `emb_vec.detach().numpy()`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def embedding_curve(embedding, token_id):
    emb_vec = embedding.weight[token_id]
    xs = torch.arange(emb_vec.shape[0])
    return xs.numpy(), emb_vec.numpy()


def demo():
    xs, ys = embedding_curve(nn.Embedding(10, 4), 3)
    return len(xs) == len(ys) == 4
