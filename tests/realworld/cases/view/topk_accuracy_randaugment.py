"""Bug case: top-k accuracy helper flattens a slice of a transposed prediction matrix.

Source: https://github.com/ildoonet/pytorch-randaugment/issues/26
What goes wrong: `pred` is transposed with `.t()`, so `correct[:k]` is a non-contiguous slice and `.view(-1)` raises
The fix: use `.reshape(-1)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = []
    for k in topk:
        correct_k = correct[:k].view(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res


def demo():
    output = torch.randn(8, 10)
    target = torch.randint(0, 10, (8,))
    top1, top5 = accuracy(output, target, topk=(1, 5))
    return 0 <= top1.item() <= top5.item() <= 100
