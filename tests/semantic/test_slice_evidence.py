"""Evidence from a slice passed to a torch function: ``torch.min(b[:, None, :2], c)`` takes a
tensor, and a slice of a NumPy array (or of anything but a tensor) is not one, so ``b`` is a
tensor with at least as many dims as the slice consumes."""

from semantic_probe import one, shape


def test_a_sliced_argument_of_a_torch_function_makes_a_tensor_with_a_rank_bound():
    code = "import torch\ndef f(b, c):\n    reveal(b)\n    return torch.min(b[:, None, :2], c[:, :2])\n"
    assert one(code).kind == "tensor"
    assert shape(code) == "(?, ?, ...)"


def test_a_plain_slice_or_an_index_says_nothing():
    assert one("import torch\ndef f(b):\n    reveal(b)\n    return torch.exp(b[:2])\n").kind is None
    assert one("import torch\ndef f(b):\n    reveal(b)\n    return torch.exp(b[0, 1])\n").kind is None


def test_a_numpy_function_of_a_slice_poisons_the_name():
    code = ("import numpy as np\nimport torch\ndef f(b):\n    reveal(b)\n    np.min(b[:, :2])\n"
            "    return torch.exp(b[:, :2])\n")
    assert one(code).kind is None
