"""Fixed twin: FixMatch-style `accuracy` in utils/misc.py used at test time.

Source: https://github.com/kekmodel/FixMatch-pytorch/issues/26
What goes wrong: the k-row slice of the transposed `correct` matrix is not contiguous, `.view(-1)` raises after the
first epoch's test
The fix: `.contiguous().view(-1)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def accuracy(output, target, topk=(1,)):
    """Computes the precision@k for the specified values of k"""
    maxk = max(topk)
    batch_size = target.size(0)

    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.reshape(1, -1).expand_as(pred))

    res = []
    for k in topk:
        correct_k = correct[:k].contiguous().view(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res


def test(model, loader):
    top1 = []
    with torch.no_grad():
        for inputs, targets in loader:
            outputs = model(inputs)
            prec1, prec5 = accuracy(outputs, targets, topk=(1, 5))
            top1.append(prec1.item())
    return sum(top1) / len(top1)


def demo():
    model = torch.nn.Linear(4, 10)
    loader = [(torch.randn(6, 4), torch.randint(0, 10, (6,))) for _ in range(2)]
    return 0 <= test(model, loader) <= 100
