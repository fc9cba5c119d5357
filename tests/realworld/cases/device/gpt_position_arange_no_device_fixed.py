"""Fixed twin: GPT forward builds position indices with torch.arange and no device.

Source: https://github.com/huggingface/transformers/pull/44753
What goes wrong: `torch.arange(0, t)` without `device=` is created on the CPU each forward; the GPU position
embedding raises
The fix: `torch.arange(0, t, dtype=torch.long, device=idx.device)`
Verified with torch 2.13 on CPU: by reasoning: on a CUDA model `self.wpe(pos)` receives CPU indices and nn.Embedding
raises "Expected all tensors to be on the same device"; the meta device accepts CPU indices in embedding lookups, so
the CPU run cannot show it.
"""
import torch
import torch.nn as nn


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        tok_emb = self.wte(idx)
        pos_emb = self.wpe(pos)
        return self.lm_head(tok_emb + pos_emb)


def train(model, data, device):
    model = model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for x, y in data:
        x, y = x.cuda(), y.cuda()
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()


def demo():
    model = GPT(11, 8, 16)
    logits = model(torch.randint(0, 11, (2, 5)))
    return tuple(logits.shape) == (2, 5, 11)
