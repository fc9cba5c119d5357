"""Bug case: bigram count matrix normalised in place by row sums without keepdim.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
What goes wrong: `P.sum(1)` has shape (27,) and broadcasts as a row, so `P /= P.sum(1)` divides every column j by
the sum of row j; the square matrix hides it and rows no longer sum to 1
The fix: `P /= P.sum(1, keepdim=True)`
Verified with torch 2.13 on CPU: demo() returns False (the result is wrong, torch raises nothing).
"""
import torch


def build_bigram_model(words, stoi):
    N = torch.zeros((27, 27), dtype=torch.int32)
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            N[stoi[ch1], stoi[ch2]] += 1
    P = (N + 1).float()
    P /= P.sum(1)
    return P


def demo():
    chars = ".abcdefghijklmnopqrstuvwxyz"
    stoi = {c: i for i, c in enumerate(chars)}
    P = build_bigram_model(["emma", "olivia", "ava", "isabella"], stoi)
    return torch.allclose(P.sum(1), torch.ones(27))
