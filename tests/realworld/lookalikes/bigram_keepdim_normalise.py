"""Look-alike (correct code): bigram counts normalised with P /= P.sum(1, keepdim=True).

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
Why it is correct: the (27, 1) row sums broadcast along each row
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def bigram_probs(counts):
    P = (counts + 1).float()
    P /= P.sum(1, keepdim=True)
    return P


def demo():
    P = bigram_probs(torch.randint(0, 9, (27, 27)))
    return torch.allclose(P.sum(1), torch.ones(27))
