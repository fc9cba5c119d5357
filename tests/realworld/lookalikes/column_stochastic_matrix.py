"""Look-alike (correct code): column-normalising a square count matrix with sum(0).

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
Why it is correct: `P.sum(0)` reduces the leading axis; the (C,) result broadcasts as a row and divides each column
by its own sum
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def column_normalise(counts):
    P = counts.float() + 1
    return P / P.sum(0)


def demo():
    P = column_normalise(torch.randint(0, 5, (4, 4)))
    return torch.allclose(P.sum(0), torch.ones(4))
