"""SC601, SC602, SC604 on real-code shapes: layer outputs of unknown rank, operands of a
comparison, lists built by ``append`` (each behaviour verified with torch 2.13 on CPU)."""

from __future__ import annotations

from functools import partial

from rule_harness import family_rules, findings

PITFALLS = family_rules("SC601", "SC602", "SC604")
flagged = partial(findings, rules=PITFALLS)

LINEAR = "import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 4)\n"


def test_or_on_a_comparison_of_a_layer_output():
    [(code, line, message)] = flagged(LINEAR + "def f(x, best):\n    a = fc(x)\n    return (a > best) or (a < 0)\n")
    assert (code, line) == ("SC601", 6)
    assert "`(a > best)` is a tensor of shape (..., 4)" in message and "`or`" in message


def test_equality_with_an_unknown_value_may_be_a_python_bool():
    assert flagged(LINEAR + "def f(x, y):\n    a = fc(x)\n    if a == y or a == None:\n        return 1\n") == []


def test_item_on_a_comparison_of_a_layer_output():
    [(code, line, message)] = flagged(LINEAR + "def f(x):\n    return (fc(x) == 0).item()\n")
    assert (code, line) == ("SC602", 5)
    assert "RuntimeError (a Tensor with more than one element" in message


def test_item_after_a_reduction_over_dim_1_is_not_flagged():
    # greedy decoding of one sentence: the batch is 1 by construction elsewhere
    code = "import torch\ndef f(model, out):\n    prob = model.ff(out[:, -1])\n" \
           "    _, next_word = torch.max(prob, dim=1)\n    return next_word.item()\n"
    assert flagged(code) == []


def test_torch_tensor_of_appended_layer_outputs():
    code = LINEAR + "def run(loader):\n    outputs = []\n    for x in loader:\n        outputs.append(fc(x))\n" \
                    "    return torch.tensor(outputs)\n"
    [(code_, line, message)] = flagged(code)
    assert (code_, line) == ("SC604", 8)
    assert message.startswith("`torch.tensor` of a list of tensors: `outputs` holds `fc(x)`, "
                              "a tensor of shape (..., 4)")
    assert "raises ValueError" in message and "torch.stack" in message


def test_legacy_constructor_of_embeddings_names_the_condition():
    code = "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 4)\ndef f(ids):\n    embs = []\n" \
           "    for i in ids:\n        embs.append(emb(i))\n    return torch.FloatTensor(embs)\n"
    [(code_, line, message)] = flagged(code)
    assert (code_, line) == ("SC604", 8)
    assert "raises ValueError unless `emb(i)` has one element" in message


def test_long_tensor_of_tensors_raises_type_error():
    [(_, _, message)] = flagged("import torch\na = torch.ones(2, 3, dtype=torch.long)\nb = torch.LongTensor([a])\n")
    assert "raises TypeError" in message


def test_lists_that_may_hold_numbers_are_not_flagged():
    code = LINEAR + (
        "def run(loader, flag):\n    maybe = []\n    nums = []\n    extended = []\n    for x in loader:\n"
        "        if flag:\n            maybe.append(fc(x))\n        nums.append(fc(x).sum().item())\n"
        "        extended.append(fc(x))\n    extended.extend([1.0])\n"
        "    return torch.tensor(maybe), torch.tensor(nums), torch.tensor(extended)\n")
    assert flagged(code) == []
