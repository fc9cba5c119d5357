"""Bug case: hand-rolled depth-to-space (pixel shuffle) with view/permute/view.

Source: http://3fwork.com/kaifa205/008487MYM013747
What goes wrong: the final `.view(b, c, h * r, w * r)` merges dims that the permute interleaved and raises
The fix: `.reshape(b, c, h * r, w * r)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def depth_to_space(x, r):
    b, c, h, w = x.size()
    c_out = c // (r * r)
    x = x.view(b, c_out, r, r, h, w)
    x = x.permute(0, 1, 4, 2, 5, 3)
    return x.view(b, c_out, h * r, w * r)


def demo():
    x = torch.randn(1, 8, 3, 3)
    y = depth_to_space(x, 2)
    return torch.equal(y, torch.nn.functional.pixel_shuffle(x, 2))
