"""Bug case: YOLO loss indexes a permuted prediction map and views it as boxes.

Source: https://github.com/Tianxiaomo/pytorch-YOLOv4/issues/553
What goes wrong: `output.view(...).permute(0, 1, 3, 4, 2)` is not contiguous; `pred[b].view(-1, 4)` raises
The fix: `pred[b].reshape(-1, 4)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def box_area(boxes):
    return boxes[:, 2] * boxes[:, 3]


def build_target(output, n_anchors, n_ch, fsize):
    batchsize = output.shape[0]
    output = output.view(batchsize, n_anchors, n_ch, fsize, fsize)
    output = output.permute(0, 1, 3, 4, 2)
    pred = output[..., :4]
    areas = []
    for b in range(batchsize):
        areas.append(box_area(pred[b].view(-1, 4)))
    return areas


def demo():
    out = torch.rand(2, 3 * 6, 4, 4)
    areas = build_target(out, 3, 6, 4)
    return len(areas) == 2 and areas[0].shape[0] == 3 * 4 * 4
