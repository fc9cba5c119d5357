"""Look-alike (correct code): position indices created with device=idx.device in forward.

Source: https://github.com/huggingface/transformers/pull/44753
Why it is correct: the factory takes its device from the input, so it follows the model wherever it runs
Verified with torch 2.13 on CPU: demo() runs clean and returns True (verify.py maps .cuda() to the meta device).
"""
import torch
import torch.nn as nn


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        return self.wte(idx) + self.wpe(pos)


def demo():
    model = GPT(11, 8, 4).cuda()
    out = model(torch.randint(0, 11, (2, 5)).cuda())
    return tuple(out.shape) == (2, 5, 4)
