"""Bug case: log-softmax written with logsumexp for an NLL loss.

Source: https://mwolf.dev/general/log-sum-exp-trick
What goes wrong: `torch.logsumexp(logits, dim=1)` drops the class axis; `logits - lse` raises for (N, C) unless N ==
C
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def nll_from_logits(logits, target):
    lse = torch.logsumexp(logits, dim=1)
    log_probs = logits - lse
    return -log_probs.gather(1, target.unsqueeze(1)).mean()


def demo():
    model = nn.Linear(3, 4)
    x, y = torch.randn(6, 3), torch.randint(0, 4, (6,))
    loss = nll_from_logits(model(x), y)
    return torch.allclose(loss, nn.functional.cross_entropy(model(x), y))
