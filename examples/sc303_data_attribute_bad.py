"""SC303 data-attribute: weights clipped through `.data` between the forward pass and `backward()`.

Run it: `python examples/sc303_data_attribute_bad.py` runs with no error, but the gradient of
the weight is computed from the clipped values, not from those the forward pass used: it prints
the wrong gradient next to the right one.
"""

import torch


def grad_of_step(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    loss = (x * w * w).sum()
    w.data.clamp_(-0.1, 0.1)
    loss.backward()
    return w.grad


if __name__ == "__main__":
    x = torch.ones(3)
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    print("got", grad_of_step(w, x).tolist(), "expected", (2 * x * torch.tensor([1.0, 2.0, 3.0])).tolist())
