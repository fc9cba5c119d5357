"""SC203 on ``nn.Sequential`` calls, checked against torch: random stacks of convolutions,
pooling, normalisation and activations, then ``nn.Flatten()`` and an ``nn.Linear`` whose
``in_features`` is right or wrong. A stack torch runs gets no finding; a finding is only made
on a stack where torch raises at the Linear layer (mat1 and mat2 shapes cannot be multiplied)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

torch = pytest.importorskip("torch")

_CONV = st.builds(lambda out, k, pad, stride, dilation: ("conv", f"{out}, {k}, padding={pad}, stride={stride}, "
                                                                  f"dilation={dilation}", out),
                  st.sampled_from([4, 8]), st.sampled_from([1, 3, 5]), st.sampled_from([0, 1, 2, "'same'", "'valid'"]),
                  st.sampled_from([1, 2]), st.sampled_from([1, 2]))
_SAME = st.sampled_from([
    "nn.ReLU()", "nn.Dropout(0.1)", "nn.MaxPool2d(2)", "nn.MaxPool2d(3)", "nn.AvgPool2d(2, stride=1)",
    "nn.AvgPool2d(2)", "nn.AdaptiveAvgPool2d(1)", "nn.AdaptiveAvgPool2d((2, 2))", "nn.AdaptiveMaxPool2d(3)",
    "nn.MaxPool2d(2, ceil_mode=True)", "nn.MaxPool2d(3, stride=2, ceil_mode=True)",
    "nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True)",
])
_LAYER = st.one_of(_CONV, _SAME, st.just("bn"))


def _stack(layers) -> list[str]:
    """The layers as code, each convolution and batch norm taking the channels before it."""
    channels, out = 3, []
    for layer in layers:
        if isinstance(layer, tuple):
            out.append(f"nn.Conv2d({channels}, {layer[1]})")
            channels = layer[2]
        elif layer == "bn":
            out.append(f"nn.BatchNorm2d({channels})")
        else:
            out.append(layer)
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(_LAYER, min_size=1, max_size=4), st.sampled_from([8, 12, 16, 28, 32]),
       st.integers(min_value=0, max_value=600), st.booleans())
def test_a_finding_on_a_sequential_only_where_torch_raises_at_its_linear_layer(layers, size, guess, right):
    nn = torch.nn
    stack = _stack(layers)
    try:
        flat = eval(f"nn.Sequential({', '.join(stack)}, nn.Flatten())", {"nn": nn})(torch.randn(2, 3, size, size))
    except (RuntimeError, ValueError):
        return  # torch raises before the Linear layer (or rejects a layer)
    features = flat.shape[1] if right else guess + 1
    code = (f"import torch\nimport torch.nn as nn\nm = nn.Sequential({', '.join(stack)}, nn.Flatten(), "
            f"nn.Linear({features}, 10))\ny = m(torch.randn(2, 3, {size}, {size}))\n")
    found = [d for d in lint_text(code, [get_rule("SC203")]) if d.code == "SC203"]
    if features == flat.shape[1]:
        assert found == [], code
    else:
        assert all("is not" in d.message and "mat1 and mat2" in d.message for d in found), code
