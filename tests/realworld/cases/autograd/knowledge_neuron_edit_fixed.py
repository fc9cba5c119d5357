"""Fixed twin: editing a column of a dense layer's weight to erase a fact.

Source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14
What goes wrong: `dense.weight[:, pos] -= emb * lam` is an in-place update of a view of a leaf parameter and raises
The fix: do the edit under `torch.no_grad()`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def edit_knowledge(dense, pos, ori_pred_emb, tgt_emb, lam1, lam2):
    with torch.no_grad():
        dense.weight[:, pos] -= ori_pred_emb * lam1
        dense.weight[:, pos] += tgt_emb * lam2
    return dense


def demo():
    dense = nn.Linear(6, 4)
    before = dense.weight[:, 2].detach().clone()
    edit_knowledge(dense, 2, torch.ones(4), torch.zeros(4), 0.5, 1.0)
    return torch.allclose(dense.weight[:, 2].detach(), before - 0.5)
