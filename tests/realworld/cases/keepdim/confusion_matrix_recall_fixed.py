"""Fixed twin: row-normalised confusion matrix for a report.

Source: https://github.com/NVIDIA/cuml/issues/5360
What goes wrong: `conf / conf.sum(1)` divides each column by a row total (the square matrix hides it); the rows of
the report no longer sum to 1
The fix: `conf.sum(1, keepdim=True)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def confusion_matrix(preds, targets, n_classes):
    conf = torch.zeros(n_classes, n_classes)
    for p, t in zip(preds, targets):
        conf[t, p] += 1
    return conf


def normalized_confusion(preds, targets, n_classes):
    conf = confusion_matrix(preds, targets, n_classes)
    conf = conf / conf.sum(1, keepdim=True)
    return conf


def demo():
    preds = torch.tensor([0, 1, 1, 2, 2, 2, 0])
    targets = torch.tensor([0, 1, 2, 2, 2, 1, 1])
    conf = normalized_confusion(preds, targets, 3)
    return torch.allclose(conf.sum(1), torch.ones(3))
