"""Bug case: sinusoidal position table stored as a Parameter and filled by slice assignment.

Source: https://github.com/Atcold/NYU-DLSP20/issues/765
What goes wrong: `E` is an `nn.Parameter`; `E[:, 0::2] = torch.sin(...)` writes into a view of a leaf that requires
grad and raises
The fix: fill a plain tensor first and wrap it in a (frozen) Parameter afterwards
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab_size, max_position_embeddings):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model)
        self.position_embeddings = nn.Embedding(max_position_embeddings, d_model)
        self.create_sinusoidal_embeddings(max_position_embeddings, d_model, self.position_embeddings.weight)

    def create_sinusoidal_embeddings(self, nb_p, dim, E):
        theta = torch.arange(nb_p).unsqueeze(1) / torch.pow(10000, 2 * torch.arange(dim // 2) / dim)
        E[:, 0::2] = torch.sin(theta)
        E[:, 1::2] = torch.cos(theta)
        E.detach_()
        E.requires_grad = False

    def forward(self, input_ids):
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        return self.word_embeddings(input_ids) + self.position_embeddings(positions)


def demo():
    emb = Embeddings(8, 20, 16)
    out = emb(torch.randint(0, 20, (2, 5)))
    return tuple(out.shape) == (2, 5, 8)
