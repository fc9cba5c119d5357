"""Fixed twin: checkpoint selection compares per-model mAP tensors with `or`.

Source: https://github.com/yxgeee/MMT/issues/35
What goes wrong: the evaluator returns per-query AP tensors; `(mAP_1 > best) or (mAP_2 > best)` needs their truth
value and raises
The fix: reduce to Python floats first (`.mean().item()`)
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def select_best(ap_1, ap_2, best_mAP):
    mAP_1, mAP_2 = ap_1.mean().item(), ap_2.mean().item()
    is_best = (mAP_1 > best_mAP) or (mAP_2 > best_mAP)
    return is_best, max(mAP_1, mAP_2, best_mAP)


def demo():
    is_best, best = select_best(torch.rand(5), torch.rand(5), 0.0)
    return is_best is True
