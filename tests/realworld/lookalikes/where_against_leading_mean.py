"""Look-alike (correct code): thresholding each feature against its mean over the batch axis.

Source: https://lawwu.github.io/transcripts/transcript_PaCmpygFfXo.html
Why it is correct: the mean over the leading axis is a (F,) vector that lines up with the feature axis
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def binarize_features(x):
    return torch.where(x > x.mean(0), torch.ones_like(x), torch.zeros_like(x))


def demo():
    x = torch.tensor([[0.0, 10.0], [2.0, 20.0], [4.0, 30.0]])
    return torch.equal(binarize_features(x), torch.tensor([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]))
