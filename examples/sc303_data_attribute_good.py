"""SC303 data-attribute, fixed: clip the weights after the backward pass, under `torch.no_grad()`.

Run it: `python examples/sc303_data_attribute_good.py` prints the gradient of the values the
forward pass used.
"""

import torch


def grad_of_step(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    loss = (x * w * w).sum()
    loss.backward()
    with torch.no_grad():
        w.clamp_(-0.1, 0.1)
    return w.grad


if __name__ == "__main__":
    x = torch.ones(3)
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    print(grad_of_step(w, x).tolist())
