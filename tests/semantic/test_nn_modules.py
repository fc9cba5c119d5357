"""``torch.nn`` modules: the grad and device of module outputs and layer parameters, the
file's own module classes, modules passed to functions, frozen parameters; the layer tables
checked against torch."""

from __future__ import annotations

import pytest

from semantic_probe import facts, summary
from semantic_probe import one_with_head as one

from shapecheck.semantic.facts import CPU, CUDA, LEAF_REQUIRES_GRAD, MODULE, NO_GRAD, NON_LEAF, TENSOR
from shapecheck.shapes import format_shape


LOCAL_NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = nn.Parameter(torch.ones(2))
    def forward(self, x):
        reveal(self.fc(x))
        fc = self.fc
        reveal(fc)
        reveal(self.fc.weight)
        reveal(self.scale)
        return self.fc(x) * self.scale
"""


@pytest.mark.parametrize(
    "code, expected",
    [
        ("reveal(nn.Linear(3, 2)(torch.randn(4, 3)))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Linear(3, 2)\nreveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Conv2d(3, 8, 3)\nreveal(m.forward(torch.randn(1, 3, 8, 8)))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Embedding(10, 4)\nreveal(m(torch.tensor([1, 2])))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Linear(3, 2)\nwith torch.no_grad():\n    reveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NO_GRAD)),
        # a module-level layer that the file never moves nor gives away stays on the CPU in functions
        ("m = nn.Linear(3, 2)\n@torch.inference_mode()\ndef f():\n    reveal(m(torch.randn(4, 3)))",
         (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Linear(3, 2)\n@torch.inference_mode()\ndef f():\n    reveal(m(torch.randn(4, 3)))\n"
         "def g(d):\n    m.to(d)", (TENSOR, None, NO_GRAD)),
        ("m = nn.Linear(3, 2)\nm.requires_grad_(False)\nreveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Linear(3, 2).requires_grad_(False)\nw = torch.randn(4, 3, requires_grad=True)\nreveal(m(w))",
         (TENSOR, CPU, NON_LEAF)),
        ("m = nn.BatchNorm1d(3, affine=False)\nreveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.LayerNorm(3, elementwise_affine=False)\nreveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Sequential(nn.Linear(3, 4), nn.ReLU())\nreveal(m(torch.randn(2, 3)))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Sequential(nn.ReLU(), nn.Dropout())\nreveal(m(torch.randn(2, 3)))", (TENSOR, CPU, NO_GRAD)),
        # modules without parameters: the output follows the input
        ("reveal(nn.ReLU()(torch.randn(3)))", (TENSOR, CPU, NO_GRAD)),
        ("w = torch.randn(3, requires_grad=True)\nreveal(nn.ReLU()(w))", (TENSOR, CPU, NON_LEAF)),
        ("reveal(nn.GELU()(torch.randn(3).cuda()))", (TENSOR, CUDA, NO_GRAD)),
        ("loss = nn.MSELoss()\nreveal(loss(torch.randn(3), torch.randn(3)))", (TENSOR, CPU, NO_GRAD)),
        # the weight is a buffer of the loss, on the CPU like its inputs
        ("loss = nn.CrossEntropyLoss(weight=torch.ones(3))\nreveal(loss(torch.randn(2, 3), torch.tensor([0, 1])))",
         (TENSOR, CPU, NO_GRAD)),
        ("loss = nn.CrossEntropyLoss(weight=w)\nreveal(loss(torch.randn(2, 3), torch.tensor([0, 1])))",
         (TENSOR, None, None)),
        ("def f(m, x):\n    reveal(m(x))", (None, None, None)),
        # parameters of torch.nn layers
        ("m = nn.Linear(3, 2)\nreveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.Linear(3, 2)\nreveal(m.bias)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.Linear(3, 2, bias=False)\nreveal(m.bias)", (None, None, None)),
        ("m = nn.Linear(3, 2, False)\nreveal(m.bias)", (None, None, None)),
        ("m = nn.Linear(3, 2, bias=flag)\nreveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.Conv1d(3, 4, 1)\nm.cuda()\nreveal(m.weight)", (TENSOR, CUDA, LEAF_REQUIRES_GRAD)),
        ("m = nn.Embedding(10, 4)\nreveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.Embedding(10, 4)\nreveal(m.bias)", (None, None, None)),
        ("m = nn.LayerNorm(4)\nreveal(m.bias)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.LayerNorm(4, elementwise_affine=False)\nreveal(m.weight)", (None, None, None)),
        ("m = nn.BatchNorm2d(4)\nreveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.BatchNorm2d(4, affine=False)\nreveal(m.weight)", (None, None, None)),
        ("m = nn.LSTM(4, 8)\nreveal(m.weight_ih_l0)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.LSTM(4, 8)\nreveal(m.weight)", (None, None, None)),
        ("m = nn.MSELoss()\nreveal(m.weight)", (None, None, None)),
        ("m = nn.Linear(3, 2)\nm.requires_grad_(False)\nreveal(m.weight)", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Linear(3, 2)\nm.weight.requires_grad = False\nreveal(m.weight)", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Linear(3, 2)\nwith torch.no_grad():\n    reveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
    ],
)
def test_module_output_and_parameter_facts(code, expected):
    assert summary(one(code)) == expected


def test_local_module_instances_and_their_parameters():
    # reveal() is an unknown function that could change a module passed to it: `net.fc` is
    # revealed through another name
    code = LOCAL_NET + "net = Net()\nreveal(net(torch.randn(4, 3)))\nreveal(net.scale)\nfc = net.fc\n" \
        "reveal(fc)\nreveal(net.fc.weight)\nnet.cuda()\nreveal(net.scale)\nreveal(net.fc.bias)\n"
    seen = [summary(f) for f in facts(code)]
    assert seen == [
        (TENSOR, CUDA, NON_LEAF),  # self.fc(x) in forward: the weights of `self.fc` are on CUDA, so is x
        (MODULE, CUDA, True),  # self.fc: the file moves a `Net` to CUDA (`net.cuda()`)
        (TENSOR, CUDA, LEAF_REQUIRES_GRAD),
        (TENSOR, CUDA, LEAF_REQUIRES_GRAD),
        (TENSOR, CPU, NON_LEAF),  # net(x): the module and its input are on the CPU
        (TENSOR, CPU, LEAF_REQUIRES_GRAD),
        (MODULE, CPU, True),
        (TENSOR, CPU, LEAF_REQUIRES_GRAD),
        (TENSOR, CUDA, LEAF_REQUIRES_GRAD),
        (TENSOR, CUDA, LEAF_REQUIRES_GRAD),
    ]


def test_local_module_without_known_parameters_has_unknown_grad_and_no_device():
    code = """
    class Act(nn.Module):
        def forward(self, x):
            return torch.relu(x)
    class Wrap(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner
    reveal(Act())
    reveal(Act()(torch.randn(3)))
    reveal(Act().cuda())
    reveal(Wrap(nn.Linear(2, 2)))
    """
    assert [summary(f) for f in facts(code)] == [
        # the call runs `forward` (re-analysed): relu of a CPU tensor that does not require grad
        (MODULE, None, None), (TENSOR, CPU, NO_GRAD), (MODULE, None, None), (MODULE, None, None),
    ]


def test_freezing_anywhere_in_the_file_makes_module_grads_unknown():
    code = """
    def freeze(m):
        for p in m.parameters():
            p.requires_grad = False
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))
    m = nn.Linear(3, 2)
    net = Net()
    reveal(m(torch.randn(4, 3)))
    reveal(m.weight)
    reveal(net(torch.randn(2)))
    reveal(net.w)
    with torch.no_grad():
        reveal(m(torch.randn(4, 3)))
    """
    assert [summary(f) for f in facts(code)] == [
        (TENSOR, CPU, None), (TENSOR, CPU, None), (TENSOR, CPU, None), (TENSOR, CPU, None),
        (TENSOR, CPU, NO_GRAD),
    ]


def test_buffers_and_options_are_not_modules():
    seen = facts("reveal(nn.Buffer(torch.ones(3)))\nreveal(nn.Buffer(x))\nreveal(nn.LinearCrossEntropyOptions())\n")
    assert [summary(f) for f in seen] == [(TENSOR, CPU, NO_GRAD), (TENSOR, None, None), (None, None, None)]


@pytest.mark.parametrize(
    "expr, trainable",
    [("nn.Linear(3, 2)", True), ("nn.ReLU()", False), ("nn.MSELoss()", False),
     ("nn.CrossEntropyLoss(weight=w)", None), ("nn.BatchNorm1d(3, affine=False)", False),
     ("nn.Linear(3, 2).requires_grad_(False)", False), ("nn.Sequential(nn.ReLU(), nn.Linear(2, 2))", True),
     ("nn.Sequential(nn.ReLU(), make())", None), ("nn.ModuleList([nn.Linear(2, 2)])", None),
     ("nn.Embedding(4, 2, _freeze=True)", None), ("nn.Embedding.from_pretrained(torch.randn(4, 2))", False),
     ("nn.Embedding.from_pretrained(torch.randn(4, 2), freeze=False)", True),
     ("nn.EmbeddingBag.from_pretrained(w, freeze=frozen)", None)],
)
def test_module_trainable(expr, trainable):
    f = one(f"reveal({expr})")
    assert (f.kind, f.trainable, f.grad) == (MODULE, trainable, None)


def test_a_module_passed_to_a_function_is_forgotten():
    code = """
    from torch.nn.utils import weight_norm
    import torch.nn.utils.prune as prune
    def to_gpu(module):
        module.cuda()
    a = nn.Linear(3, 2)
    weight_norm(a)
    b = nn.Linear(3, 2)
    prune.l1_unstructured(b, "weight", amount=0.5)
    c = nn.Linear(3, 2)
    to_gpu(c)
    d = nn.Linear(3, 2)
    print(d, isinstance(d, nn.Module))
    seq = nn.Sequential(d)
    d2 = d
    e = nn.Linear(3, 2)
    accelerator.prepare(e)
    reveal(a.weight)
    reveal(b.weight)
    reveal(c)
    reveal(c(torch.randn(2, 3)))
    reveal(d2)
    reveal(e)
    """
    seen = facts(code)
    assert [summary(f) for f in seen] == [
        # `to_gpu` is a function of the file: its re-analysis says it moves `c` to the GPU
        (None, None, None), (None, None, None), (MODULE, CUDA, True), (TENSOR, None, None),
        (MODULE, CPU, True), (MODULE, None, None),
    ]
    assert seen[2].features == (3, 2) and seen[2].params == ("weight", "bias")


def test_a_module_level_module_seen_from_a_function_has_no_device():
    code = """
    model = nn.Linear(3, 2)
    def run(x):
        seen = model
        reveal(seen)
        reveal(model(x))
    model.cuda()
    """
    assert [summary(f) for f in facts(code)] == [(MODULE, None, True), (TENSOR, None, NON_LEAF)]


def test_methods_of_a_class_the_file_never_moves_see_no_device():
    code = LOCAL_NET + "net = Net()\nreveal(net.scale)\n"
    seen = [summary(f) for f in facts(code)]
    assert seen[1:4] == [(MODULE, None, True), (TENSOR, None, LEAF_REQUIRES_GRAD), (TENSOR, None, LEAF_REQUIRES_GRAD)]
    assert seen[4] == (TENSOR, CPU, LEAF_REQUIRES_GRAD)


@pytest.mark.parametrize(
    "init, expected",
    [
        ('self.register_buffer("mask", torch.ones(3, 3))', (TENSOR, CUDA, NO_GRAD)),  # moves with the module
        ("self.mask = nn.Buffer(torch.ones(3, 3))", (TENSOR, CUDA, NO_GRAD)),
        ("self.mask = nn.Parameter(torch.ones(3, 3), requires_grad=False)", (TENSOR, CUDA, NO_GRAD)),
        ("self.mask = torch.ones(3, 3)", (TENSOR, CPU, NO_GRAD)),  # a plain attribute stays on the CPU
        ("m = torch.ones(3, 3)\n        self.mask = m", (TENSOR, CPU, NO_GRAD)),
        ("w = nn.Parameter(torch.ones(3, 3))\n        self.mask = w", (TENSOR, CUDA, LEAF_REQUIRES_GRAD)),
    ],
)
def test_buffers_move_with_the_module_and_plain_tensors_stay(init, expected):
    code = (
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.fc = nn.Linear(3, 3)\n        {init}\n"
        "    def forward(self, x):\n        reveal(self.mask)\n        return x\n"
        "m = M().cuda()\nreveal(m.mask)\n"
    )
    inside, outside = [summary(f) for f in facts(code)]
    assert inside == expected
    assert outside == expected


def test_a_plain_attribute_written_outside_the_class_is_not_known():
    code = (
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(3, 3)\n        self.mask = torch.ones(3, 3)\n"
        "    def forward(self, x):\n        reveal(self.mask)\n        return x\n"
        "m = M().cuda()\nm.mask = m.mask.cuda()\n"
    )
    assert [summary(f) for f in facts(code)] == [(None, None, None)]


def test_linear_on_a_shape_whose_last_dim_follows_unknown_ones():
    """``(1, ..., 16)`` through ``nn.Linear(16, 1)`` is ``(1, ..., 1)``: the first dim and the
    last are known around the unknown ones."""
    code = """
    from jaxtyping import Float
    fc = nn.Linear(16, 1)
    def f(x: Float[torch.Tensor, "1 ... 16"]):
        reveal(fc(x))
    """
    assert format_shape(one(code).shape) == "(1, ..., 1)"


@pytest.mark.parametrize("call, shape", [("torch.rand(size=(3,))", "(3,)"), ("torch.rand(size=(3))", None),
                                         ("torch.zeros(size=[2, 3])", "(2, 3)")])
def test_a_size_keyword_takes_a_sequence_only(call, shape):
    """``size=(3)`` is the int 3, which torch rejects (TypeError): no shape is made up for it."""
    found = one(f"reveal({call})").shape
    assert (format_shape(found) if found is not None else None) == shape


def test_a_pretrained_embedding_is_a_layer_on_its_weights_device():
    seen = facts("reveal(nn.Embedding.from_pretrained(torch.randn(6, 8)))\n"
                 "reveal(nn.Embedding.from_pretrained(torch.randn(6, 8, device='cuda')))\n"
                 "reveal(nn.Embedding.from_pretrained(w))\n")
    assert [(f.kind, f.device, f.params) for f in seen] == [
        (MODULE, CPU, ("weight",)), (MODULE, CUDA, ("weight",)), (MODULE, None, ("weight",))]


@pytest.mark.parametrize(
    "construction, updates",
    [("torch.optim.Adam(net.parameters(), lr=1e-3)", frozenset({"net"})),
     ("torch.optim.SGD(params=self.critic.parameters(), lr=0.1)", frozenset({"self.critic"})),
     ("torch.optim.Adam([{'params': g.parameters()}, {'params': d.parameters(), 'lr': 1e-4}])", frozenset({"g", "d"})),
     ("torch.optim.Adam(params)", None)],
)
def test_an_optimizer_knows_the_modules_it_updates(construction, updates):
    f = one(f"reveal({construction})")
    assert (f.kind, f.updates) == ("optimizer", updates)


@pytest.mark.parametrize(
    "code, expected",
    [
        ("m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.MaxPool2d(2))\nreveal(m(torch.randn(1, 3, 8, 8)))",
         "(1, 4, 3, 3)"),
        ("m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\nreveal(m(torch.randn(5, 4)))", "(5, 2)"),
        ("m = nn.Sequential(nn.Flatten(), nn.Linear(48, 2))\nreveal(m(torch.randn(2, 3, 4, 4)))", "(2, 2)"),
        ("m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(144, 2))\nreveal(m(torch.randn(1, 3, 8, 8)))",
         "(1, 2)"),
        ("reveal(nn.Flatten(0)(torch.randn(2, 3, 4)))", "(24,)"),
        ("reveal(nn.Flatten(1, 2)(torch.randn(2, 3, 4, 5)))", "(2, 12, 5)"),
        # a recurrent layer returns a pair; a layer whose output is unknown stops the chain
        ("m = nn.Sequential(nn.LSTM(4, 8))\nreveal(m(torch.randn(2, 3, 4)))", "unknown"),
        ("m = nn.Sequential(nn.Conv2d(3, 4, 3), make())\nreveal(m(torch.randn(1, 3, 8, 8)))", "unknown"),
    ],
)
def test_a_sequential_runs_its_layers_one_after_the_other(code, expected):
    f = one(code)
    assert (format_shape(f.shape) if f.shape is not None else "unknown") == expected
