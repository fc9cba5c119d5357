"""The layer tables of :mod:`shapecheck.semantic.torch_api` that SC302 reads, checked against
torch itself: change the input (or the output) in place after the call, then run backward."""

from __future__ import annotations

import pytest

from shapecheck.semantic import layer_saves, torch_api as api

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
    return _backward_breaks(y)


def _backward_breaks(y) -> bool:
    """Backward through ``y`` raises because a tensor it saved was changed in place."""
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


#: the layers :func:`shapecheck.semantic.layer_saves.saves_weights` says save their weights, built
#: with the input shape they take
_WEIGHTED = {
    **{name: _BUILD[name] for name in api.WEIGHT_LAYERS_SAVING_INPUT},
    "RNN": ((4, 5), (3, 2, 4)), "LSTM": ((4, 5), (3, 2, 4)), "GRU": ((4, 5), (3, 2, 4)),
    "Bilinear": ((4, 4, 3), (2, 4)), "MultiheadAttention": ((4, 2), (3, 2, 4)),
}


def test_the_tables_are_the_ones_checked_here():
    assert layer_saves.WEIGHTS_FOR_INPUT == set(_WEIGHTED) | {"Sequential"}
    assert layer_saves.WEIGHTS_ALWAYS == {"RNN", "LSTM", "GRU"}


def _call(layer: str, module, x):
    if layer == "Bilinear":
        return module(x, x)
    if layer == "MultiheadAttention":
        return module(x, x, x)[0]
    out = module(x)
    return out[0] if isinstance(out, tuple) else out


def _step_breaks(module, call, x) -> bool:
    """A second backward through ``call(module, x)`` raises once an optimizer over the module's
    parameters stepped after the first one."""
    y = call(module, x)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    (y * 1).sum().backward(retain_graph=True)
    optimizer.step()
    return _backward_breaks(y)


def _input(shape, grad: bool):
    x = torch.rand(*shape) + 0.5
    return x.requires_grad_() * 1 if grad else x


@pytest.mark.parametrize("layer", sorted(_WEIGHTED))
def test_a_step_breaks_backward_through_a_layer_whose_input_requires_grad(layer):
    args, shape = _WEIGHTED[layer]
    module = getattr(nn, layer)(*args)
    assert _step_breaks(module, lambda m, x: _call(layer, m, x), _input(shape, True))


@pytest.mark.parametrize("layer", sorted(layer_saves.WEIGHTS_ALWAYS))
def test_a_step_breaks_backward_through_a_recurrent_layer_whatever_its_input(layer):
    args, shape = _WEIGHTED[layer]
    module = getattr(nn, layer)(*args)
    assert _step_breaks(module, lambda m, x: _call(layer, m, x), _input(shape, False))


def test_a_step_breaks_backward_through_a_sequential_whose_input_requires_grad():
    module = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    assert _step_breaks(module, lambda m, x: m(x), _input((2, 4), True))


class _TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def test_a_step_breaks_backward_through_two_chained_layers_whatever_the_input():
    assert _step_breaks(_TwoLayers(), lambda m, x: m(x), _input((2, 4), False))


def test_a_step_leaves_backward_through_one_layer_on_data_alone():
    assert not _step_breaks(nn.Linear(4, 3), lambda m, x: m(x), _input((2, 4), False))
