"""The layer tables of :mod:`shapecheck.semantic.torch_api` that SC302 reads, checked against
torch itself: change the input (or the output) in place after the call, then run backward."""

from __future__ import annotations

import pytest

from shapecheck.semantic import torch_api as api

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

#: constructor arguments of each tabled layer, and the input shape it takes
_BUILD = {
    "Linear": ((6, 3), (2, 6)), "Conv1d": ((4, 4, 3), (2, 4, 6)), "Conv2d": ((4, 4, 3), (2, 4, 6, 6)),
    "Conv3d": ((4, 4, 3), (2, 4, 5, 5, 5)), "ConvTranspose1d": ((4, 4, 3), (2, 4, 6)),
    "ConvTranspose2d": ((4, 4, 3), (2, 4, 6, 6)), "ConvTranspose3d": ((4, 4, 3), (2, 4, 5, 5, 5)),
    "LayerNorm": ((6,), (2, 6)), "GroupNorm": ((2, 4), (2, 4, 6)), "BatchNorm1d": ((4,), (3, 4)),
    "BatchNorm2d": ((4,), (2, 4, 3, 3)), "BatchNorm3d": ((4,), (2, 4, 3, 3, 3)), "PReLU": ((), (2, 6)),
    "GELU": ((), (2, 6)), "SiLU": ((), (2, 6)), "Mish": ((), (2, 6)), "ELU": ((), (2, 6)),
    "LeakyReLU": ((), (2, 6)), "Softplus": ((), (2, 6)), "Hardswish": ((), (2, 6)),
    "MaxPool1d": ((2,), (2, 4, 6)), "MaxPool2d": ((2,), (2, 4, 6, 6)), "MaxPool3d": ((2,), (2, 4, 4, 4, 4)),
    "AvgPool1d": ((2,), (2, 4, 6)), "AvgPool2d": ((2,), (2, 4, 6, 6)), "AvgPool3d": ((2,), (2, 4, 4, 4, 4)),
    "RMSNorm": ((6,), (2, 6)), "InstanceNorm1d": ((4,), (2, 4, 6)), "InstanceNorm2d": ((4,), (2, 4, 6, 6)),
    "InstanceNorm3d": ((4,), (2, 4, 4, 4, 4)), "ReLU": ((), (2, 6)), "Sigmoid": ((), (2, 6)),
    "Tanh": ((), (2, 6)), "Softmax": ((-1,), (2, 6)), "LogSoftmax": ((-1,), (2, 6)),
}


def _breaks(layer: str, input_grad: bool, change: str) -> bool:
    """Backward raises after changing the layer's input (or output) in place."""
    args, shape = _BUILD[layer]
    module = getattr(nn, layer)(*args)
    x = torch.rand(*shape) + 0.5
    x = x.requires_grad_() * 1 if input_grad else x
    y = module(x)
    (x if change == "input" else y).add_(1)
    try:
        (y * 1).sum().backward()
    except RuntimeError as error:
        assert "inplace operation" in str(error)
        return True
    return False


@pytest.mark.parametrize("layer", sorted(api.WEIGHT_LAYERS_SAVING_INPUT))
def test_layers_with_weights_save_their_input_whatever_it_is(layer):
    assert _breaks(layer, False, "input")


@pytest.mark.parametrize("layer", sorted(api.LAYERS_SAVING_INPUT))
def test_layers_save_an_input_that_requires_grad(layer):
    assert _breaks(layer, True, "input")


@pytest.mark.parametrize("layer", sorted(api.LAYERS_SAVING_RESULT))
def test_layers_save_their_output(layer):
    assert _breaks(layer, True, "output")
    assert not _breaks(layer, True, "input")


@pytest.mark.parametrize("name", sorted(api.FUNCTIONS_SAVING_INPUT_FOR_WEIGHT))
def test_functions_save_their_input_for_the_weight(name):
    fn = getattr(F, name.split(".")[-1])
    x = torch.rand(2, 4, 6)
    weight = {"linear": (3, 6), "conv1d": (4, 4, 3), "conv2d": (4, 4, 3, 3), "conv3d": (4, 4, 3, 3, 3),
              "layer_norm": (6,), "group_norm": (4,)}[name.split(".")[-1]]
    w = nn.Parameter(torch.rand(*weight))
    args = {"layer_norm": ((6,),), "group_norm": (2,)}.get(name.split(".")[-1], ())
    if name.endswith("conv2d"):
        x = torch.rand(2, 4, 6, 6)
    elif name.endswith("conv3d"):
        x = torch.rand(2, 4, 4, 4, 4)
    position = api.FUNCTIONS_SAVING_INPUT_FOR_WEIGHT[name]
    call = [x, *args]
    call.insert(position, w)
    y = fn(*call)
    x.add_(1)
    with pytest.raises(RuntimeError, match="inplace operation"):
        y.sum().backward()


def test_an_in_place_dropout_of_probability_zero_writes_nothing():
    x = torch.rand(2, 6, requires_grad=True) * 1
    s = x.softmax(-1)
    nn.Dropout(0.0, inplace=True)(s).sum().backward()  # no version bump
    s = x.softmax(-1)
    with pytest.raises(RuntimeError, match="inplace operation"):
        nn.Dropout(0.5, inplace=True)(s).sum().backward()


@pytest.mark.parametrize("name", sorted(api.INT64_RESULT_FUNCTIONS))
def test_index_and_count_functions_give_int64(name):
    probabilities = torch.rand(5)
    out = {"bincount": lambda: torch.bincount(torch.tensor([1, 2, 2])),
           "bucketize": lambda: torch.bucketize(probabilities, torch.tensor([0.5])),
           "searchsorted": lambda: torch.searchsorted(torch.tensor([0.1, 0.5]), probabilities),
           "multinomial": lambda: torch.multinomial(probabilities, 2)}[name]()
    assert out.dtype == torch.int64
