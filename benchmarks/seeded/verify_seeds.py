"""Reproduce the seeds marked ``verified = "run"`` with torch on the CPU.

For each such seed a small driver runs an excerpt of the real file (the classes and functions
the seed touches, with tiny sizes, stubs for what the excerpt imports from elsewhere) twice: on
the original text, which must run, and on the seeded text, which must raise (a bug) or run (a
control). Device seeds are not run here (no GPU); their ``why`` gives the reasoning.

Usage::

    python benchmarks/seeded/verify_seeds.py          # every seed with a driver
    python benchmarks/seeded/verify_seeds.py ID ...   # only these seeds

Exit status 1 when a seed does not behave as its entry says, or a ``run`` seed has no driver.
The drivers execute code read from the snapshots under /work/.mirror; run it only on those.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import sys
import types
import typing
import warnings
from typing import Any, Callable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import run as R  # noqa: E402  (the runner next to this file)

Driver = Callable[[str], Any]
DRIVERS: dict[str, Driver] = {}
SOURCES, SEEDS = R.load_seeds(R.DEFAULT_SEEDS)
_TEXT: dict[str, str] = {}


def text(key: str) -> str:
    """The original text of the file ``key`` of seeds.toml."""
    if key not in _TEXT:
        _TEXT[key] = R.read_source(R.DEFAULT_MIRROR, SOURCES[key])
    return _TEXT[key]


def _base_namespace(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    ns: dict[str, Any] = {"torch": torch, "nn": nn, "F": F, "math": math, "np": np}
    for name in ("Optional", "List", "Tuple", "Union", "Type", "Final", "Sequence"):
        ns[name] = getattr(typing, name)
    ns.update(extra or {})
    return ns


def defs(src: str, names: list[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A namespace holding the top-level functions and classes ``names`` of ``src``
    (decorators dropped), run in order over torch, nn, F, math, np and ``extra``."""
    ns = _base_namespace(extra)
    for node in ast.parse(src).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            node.decorator_list = []
            exec(compile(ast.Module([node], []), "<excerpt>", "exec"), ns)
    return ns


def method(src: str, cls: str, name: str) -> Callable[..., Any]:
    """The method ``cls.name`` of ``src`` as a plain function."""
    for node in ast.parse(src).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    ns = _base_namespace()
                    exec(compile(ast.Module([item], []), "<method>", "exec"), ns)
                    return typing.cast(Callable[..., Any], ns[name])
    raise KeyError(f"{cls}.{name}")


def whole(src: str) -> dict[str, Any]:
    """The namespace of the whole file run as a module that is not ``__main__``."""
    module = types.ModuleType("excerpt")
    sys.modules["excerpt"] = module  # dataclasses look their module up
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(src, "<file>", "exec"), module.__dict__)
    return module.__dict__


def line_with(src: str, needle: str) -> str:
    """The first line of ``src`` containing ``needle``, stripped."""
    return next(line for line in src.split("\n") if needle in line).strip()


def driver(*ids: str) -> Callable[[Driver], Driver]:
    """Register a driver for these seeds."""
    def register(fn: Driver) -> Driver:
        for seed_id in ids:
            DRIVERS[seed_id] = fn
        return fn
    return register


def _quiet(fn: Callable[[], Any]) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return fn()


# ---------------------------------------------------------------- nanoGPT, minGPT, makemore
def _nanogpt(src: str, flash: bool = True) -> Any:
    sdpa = F.scaled_dot_product_attention
    if not flash:  # the file falls back to its manual attention when SDPA is missing
        del torch.nn.functional.scaled_dot_product_attention
    try:
        ns = whole(src)
        cfg = ns["GPTConfig"](block_size=8, vocab_size=11, n_layer=1, n_head=2, n_embd=8)
        return _quiet(lambda: ns["GPT"](cfg))
    finally:
        torch.nn.functional.scaled_dot_product_attention = sdpa


@driver("ctl-nanogpt-reshape", "nanogpt-block-iadd", "nanogpt-init-normal-inplace")
def _nanogpt_train_step(src: str) -> None:
    model = _nanogpt(src)
    idx = torch.randint(0, 11, (2, 5))
    model(idx, idx)[1].backward()


@driver("nanogpt-qk-no-transpose", "nanogpt-attn-view")
def _nanogpt_manual_attention(src: str) -> None:
    model = _nanogpt(src, flash=False)
    idx = torch.randint(0, 11, (2, 5))
    model(idx, idx)[1].backward()


@driver("nanogpt-topk-threshold", "nanogpt-topk-tuple")
def _nanogpt_generate(src: str) -> None:
    model = _nanogpt(src)
    model.eval()
    model.generate(torch.randint(0, 11, (2, 3)), 2, top_k=3)


def _mingpt(src: str) -> Any:
    utils = types.ModuleType("mingpt.utils")
    exec(compile(R.read_source(R.DEFAULT_MIRROR, R.Source(
        "", "karpathy/minGPT", SOURCES["mingpt-model"].commit, "mingpt/utils.py")), "utils", "exec"),
        utils.__dict__)
    package = types.ModuleType("mingpt")
    package.utils = utils  # type: ignore[attr-defined]
    sys.modules["mingpt"] = package
    sys.modules["mingpt.utils"] = utils
    ns = whole(src)
    config = ns["GPT"].get_default_config()
    config.model_type, config.n_layer, config.n_head, config.n_embd = None, 1, 2, 8
    config.vocab_size, config.block_size = 11, 8
    return _quiet(lambda: ns["GPT"](config))


@driver("mingpt-attn-permute-view", "mingpt-qk-wrong-transpose", "ctl-mingpt-masked-fill-inplace")
def _mingpt_train_step(src: str) -> None:
    idx = torch.randint(0, 11, (2, 5))
    _mingpt(src)(idx, idx)[1].backward()


@driver("mingpt-topk-idx")
def _mingpt_generate(src: str) -> None:
    model = _mingpt(src)
    model.eval()
    model.generate(torch.randint(0, 11, (2, 3)), 2, do_sample=False)


class _MakemoreConfig:
    block_size, vocab_size, n_layer, n_embd, n_embd2, n_head = 6, 11, 1, 8, 12, 2


@driver("makemore-bow-matmul-order")
def _makemore_bow(src: str) -> None:
    defs(src, ["CausalBoW"])["CausalBoW"](_MakemoreConfig)(torch.randn(2, 5, 8))


@driver("makemore-gru-reset-mul-inplace")
def _makemore_gru(src: str) -> None:
    cell = defs(src, ["GRUCell"])["GRUCell"](_MakemoreConfig)
    hidden = torch.zeros(2, 12, requires_grad=True)
    cell(torch.randn(2, 8), hidden).sum().backward()


@driver("makemore-eval-item")
def _makemore_eval(src: str) -> None:
    exec(line_with(src, "mean_loss = torch.tensor(losses)"), {"torch": torch, "losses": [2.0, 3.0]})


# ---------------------------------------------------------------- timm
@driver("timm-attn-view", "ctl-timm-qkv-view")
def _timm_attention(src: str) -> None:
    ns = defs(src, ["maybe_add_mask", "resolve_self_attn_mask", "Attention"],
              {"use_fused_attn": lambda: False, "register_notrace_function": lambda f: f})
    ns["Attention"](8, num_heads=2)(torch.randn(2, 5, 8)).sum().backward()


@driver("swin-partition-view", "swin-reverse-view")
def _swin_windows(src: str) -> None:
    ns = defs(src, ["window_partition", "window_reverse"])
    windows = ns["window_partition"](torch.randn(2, 8, 8, 3), (4, 4))
    ns["window_reverse"](windows, (4, 4), 8, 8)


@driver("ctl-swin-relcoords-no-contiguous")
def _swin_relative_index(src: str) -> None:
    ns = defs(src, ["get_relative_position_index"],
              {"ndgrid": lambda *a: torch.meshgrid(*a, indexing="ij")})
    ns["get_relative_position_index"](3, 3).view(-1)


@driver("evo-instance-std-keepdim")
def _evo_instance_std(src: str) -> None:
    defs(src, ["instance_std"])["instance_std"](torch.randn(2, 3, 4, 5))


@driver("timm-norm-var-mean-keepdim")
def _layer_norm_cf(src: str) -> None:
    defs(src, ["_layer_norm_cf"])["_layer_norm_cf"](torch.randn(2, 3, 4, 5), torch.ones(3), torch.zeros(3), 1e-5)


@driver("fast-norm-rms2d-keepdim")
def _rms_norm2d(src: str) -> None:
    defs(src, ["rms_norm2d"])["rms_norm2d"](torch.randn(2, 3, 4, 5), [3], torch.ones(3))


@driver("lse-max-values-keepdim")
def _lse_pool(src: str) -> None:
    defs(src, ["LsePlus1d"])["LsePlus1d"]()(torch.randn(2, 5, 3))


@driver("imagenet-accuracy-view", "imagenet-accuracy-expand", "imagenet-topk-tuple", "ctl-imagenet-contiguous-view")
def _imagenet_accuracy(src: str) -> None:
    defs(src, ["accuracy"])["accuracy"](torch.randn(6, 10), torch.randint(0, 10, (6,)), topk=(1, 5))


@driver("lse2d-amax-no-keepdim")
def _lse_pool2d(src: str) -> None:
    defs(src, ["LsePlus2d"])["LsePlus2d"]()(torch.randn(2, 3, 4, 5))


@driver("gat-head-merge-view", "gat-mm-order")
def _gat_layer(src: str) -> None:
    layer = defs(src, ["GraphAttentionLayer"])["GraphAttentionLayer"](5, 8, n_heads=2, concat=True)
    adj = (torch.rand(4, 4) > 0.3).float()
    layer(torch.randn(4, 5), adj).sum().backward()


@driver("mnist-correct-item")
def _mnist_correct(src: str) -> None:
    pred = torch.tensor([[1], [2], [3]])
    exec(line_with(src, "correct += pred.eq("), {"pred": pred, "target": torch.tensor([1, 0, 3]), "correct": 0})


@driver("ctl-actor-critic-mean0")
def _actor_critic_returns(src: str) -> None:
    exec(line_with(src, "returns = (returns - returns.mean"), {"returns": torch.tensor([1.0, 2.0, 4.0]), "eps": 1e-6})


# ---------------------------------------------------------------- CLIP, MAE, DETR
@driver("clip-image-norm-keepdim", "clip-logits-no-t", "clip-logit-scale-exp-inplace", "clip-text-norm-idiv")
def _clip_step(src: str) -> None:
    model = whole(src)["CLIP"](
        embed_dim=8, image_resolution=8, vision_layers=1, vision_width=64, vision_patch_size=4,
        context_length=5, vocab_size=10, transformer_width=64, transformer_heads=2, transformer_layers=1)
    per_image, per_text = model(torch.randn(3, 3, 8, 8), torch.randint(0, 10, (3, 5)))
    (per_image.sum() + per_text.sum()).backward()


def _mae(src: str) -> Any:
    class PatchEmbed:
        patch_size = (4, 4)

    owner = types.SimpleNamespace(patch_embed=PatchEmbed(), norm_pix_loss=True)
    for name in ("patchify", "unpatchify", "forward_loss"):
        setattr(owner, name, types.MethodType(method(src, "MaskedAutoencoderViT", name), owner))
    return owner


@driver("mae-unpatchify-view", "mae-patchify-view", "mae-unpatchify-einsum-rank")
def _mae_patches(src: str) -> None:
    owner = _mae(src)
    owner.unpatchify(owner.patchify(torch.randn(2, 3, 8, 8)))


@driver("mae-norm-pix-mean-keepdim")
def _mae_loss(src: str) -> None:
    _mae(src).forward_loss(torch.randn(2, 3, 8, 8), torch.randn(2, 4, 48), torch.ones(2, 4))


@driver("detr-box-iou-pairwise", "detr-assert-no-all")
def _detr_giou(src: str) -> None:
    ns = defs(src, ["box_iou", "generalized_box_iou"],
              {"box_area": lambda b: (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])})
    boxes1 = torch.tensor([[0.0, 0, 1, 1], [0, 0, 2, 2], [1, 1, 3, 3]])
    ns["generalized_box_iou"](boxes1, torch.tensor([[0.0, 0, 1, 2], [0, 0, 2, 1]]))


@driver("cait-einsum-output-typo")
def _cait_talking_heads(src: str) -> None:
    owner = types.SimpleNamespace(mix_heads_post_attn=torch.randn(2, 2))
    line = line_with(src, "attn = einsum('b h i j, h g")
    exec(line, {"einsum": torch.einsum, "attn": torch.randn(1, 2, 3, 3), "self": owner})


# ---------------------------------------------------------------- pytorch/examples
@driver("wlm-pe-outer-matmul")
def _positional_encoding(src: str) -> None:
    defs(src, ["PositionalEncoding"])["PositionalEncoding"](8, max_len=10)(torch.randn(4, 2, 8))


@driver("regression-stack-not-cat", "regression-sgd-no-data", "regression-weight-numpy",
        "regression-no-reduction-item")
def _regression_script(src: str) -> None:
    whole(src.replace("for batch_idx in count(1):", "for batch_idx in range(1, 3):"))


@driver("wlm-sgd-no-data")
def _manual_sgd(src: str) -> None:
    model = nn.Linear(3, 2)
    model(torch.randn(4, 3)).sum().backward()
    for p in model.parameters():
        exec(line_with(src, "add_(p.grad, alpha=-lr)"), {"p": p, "lr": 0.1})


@driver("mnist-output-backward")
def _mnist_step(src: str) -> None:
    output = defs(src, ["Net"])["Net"]()(torch.randn(2, 1, 28, 28))
    loss = F.nll_loss(output, torch.tensor([1, 2]))
    line = next(x.strip() for x in src.split("\n") if x.strip() in ("loss.backward()", "output.backward()"))
    exec(line, {"output": output, "loss": loss})


@driver("vae-kld-per-sample", "ctl-vae-exp-inplace")
def _vae_step(src: str) -> None:
    ns = defs(src, ["VAE", "loss_function"])
    data = torch.rand(4, 1, 28, 28)
    recon, mu, logvar = ns["VAE"]()(data)
    ns["loss_function"](recon, data, mu, logvar).backward()


@driver("actor-critic-no-sum")
def _actor_critic_loss(src: str) -> None:
    value = torch.randn(3, requires_grad=True)
    ns: dict[str, Any] = {"torch": torch, "policy_losses": [-(value[i] * 2) for i in range(3)],
          "value_losses": [F.smooth_l1_loss(value[i:i + 1], torch.tensor([1.0])) for i in range(3)]}
    exec(line_with(src, "loss = torch.stack(policy_losses)"), ns)
    ns["loss"].backward()


@driver("reinforce-no-sum")
def _reinforce_loss(src: str) -> None:
    value = torch.randn(3, requires_grad=True)
    ns: dict[str, Any] = {"torch": torch, "policy_loss": [-(value[i:i + 1] * 2) for i in range(3)]}
    exec(line_with(src, "policy_loss = torch.cat(policy_loss)"), ns)
    ns["policy_loss"].backward()


@driver("superres-resolve-no-detach")
def _super_resolve(src: str) -> None:
    model = defs(text("ex-superres-model"), ["Net"], {"init": torch.nn.init})["Net"](2)
    out = model(torch.randn(1, 1, 4, 4)).cpu()
    exec(line_with(src, "out_img_y = out[0]"), {"out": out})


@driver("ctl-superres-relu-inplace")
def _super_resolution_net(src: str) -> None:
    defs(src, ["Net"], {"init": torch.nn.init})["Net"](2)(torch.randn(1, 1, 4, 4)).sum().backward()


@driver("siamese-python-if")
def _siamese_pred(src: str) -> None:
    exec(line_with(src, "pred = "), {"torch": torch, "outputs": torch.rand(4)})


@driver("dcgan-dx-item")
def _dcgan_dx(src: str) -> None:
    exec(line_with(src, "D_x = "), {"output": torch.rand(4, requires_grad=True)})


@driver("ctl-timeseq-numpy-no-grad")
def _timeseq_numpy(src: str) -> None:
    weight = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        exec(line_with(src, "y = pred."), {"pred": weight * 2})


def outcome(fn: Driver, src: str) -> tuple[str, str]:
    """``("ok", "")`` or ``("raises", first line of the exception)``."""
    try:
        fn(src)
    except Exception as exc:  # the point: any exception torch raises
        return "raises", f"{type(exc).__name__}: {str(exc).splitlines()[0][:90]}"
    return "ok", ""


def main(argv: list[str]) -> int:
    """Run the drivers; print one line per seed."""
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    by_id = {s.id: s for s in SEEDS}
    wanted = argv or list(DRIVERS)
    bad = 0
    for seed_id in wanted:
        seed, fn = by_id[seed_id], DRIVERS[seed_id]
        original = text(seed.file)
        seeded = R.apply_seed(original, seed)[0]
        before, why_before = outcome(fn, original)
        after, why_after = outcome(fn, seeded)
        good = before == "ok" and after == ("ok" if seed.control else "raises")
        bad += not good
        print(f"{'ok ' if good else 'BAD'} {seed_id:<34} original={before} seeded={after} {why_after or why_before}")
    missing = [s.id for s in SEEDS if s.verified == "run" and s.id not in DRIVERS]
    if missing and not argv:
        print("marked run but without a driver:", ", ".join(missing))
    return 1 if bad or (missing and not argv) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
