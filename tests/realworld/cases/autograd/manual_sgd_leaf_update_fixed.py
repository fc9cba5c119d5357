"""Fixed twin: manual gradient step on a leaf tensor outside no_grad.

Source: https://github.com/BaiTheBest/SparseLLM/issues/13
What goes wrong: `s_batch -= lr * s_batch.grad` modifies a leaf that requires grad in place and raises
The fix: do the update under `torch.no_grad()`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def optimize_scales(target, steps=3, lr=0.1):
    s_batch = torch.ones(4, requires_grad=True)
    for _ in range(steps):
        loss_s = ((s_batch * 2 - target) ** 2).sum()
        loss_s.backward()
        with torch.no_grad():
            s_batch -= lr * s_batch.grad
        s_batch.grad.zero_()
    return s_batch


def demo():
    s = optimize_scales(torch.full((4,), 4.0))
    return bool((s > 1).all())
