"""Bug case: detector reads the box count with `.item()` on a per-image column.

Source: https://github.com/jd730/OICR-pytorch/issues/26
What goes wrong: `num_boxes[:, 0]` has one entry per image; `.item()` raises for batches of more than one image
The fix: read the count of the image being processed (`num_boxes[i, 0].item()`)
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def crop_rois(rois, num_boxes):
    out = []
    for i in range(rois.size(0)):
        nb = int(num_boxes[:, 0].item())
        out.append(rois[i, :nb])
    return out


def demo():
    rois = torch.randn(2, 5, 4)
    num_boxes = torch.tensor([[3.0, 480.0, 640.0], [2.0, 1200.0, 1846.0]])
    crops = crop_rois(rois, num_boxes)
    return [c.shape[0] for c in crops] == [3, 2]
