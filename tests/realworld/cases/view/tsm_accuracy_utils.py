"""Bug case: accuracy in utils of a video model evaluated with topk.

Source: https://github.com/mit-han-lab/temporal-shift-module/issues/235
What goes wrong: `correct` is built from `pred.t()`; the `[:k]` slice is non-contiguous for k > 1 and `.view(-1)`
raises
The fix: `.reshape(-1)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    return [correct[:k].view(-1).float().sum(0) * (100.0 / batch_size) for k in topk]


def validate(val_loader, model):
    scores = []
    for input, target in val_loader:
        output = model(input)
        prec1, prec5 = accuracy(output.data, target, topk=(1, 5))
        scores.append((prec1.item(), prec5.item()))
    return scores


def demo():
    model = torch.nn.Linear(3, 7)
    loader = [(torch.randn(4, 3), torch.randint(0, 7, (4,)))]
    s = validate(loader, model)
    return s[0][0] <= s[0][1]
