"""``torch.nn`` modules: building a layer (the parameters it holds, its device), ``Sequential``,
instances of the file's own ``nn.Module`` classes, calling a module, its methods and attributes."""

from __future__ import annotations

import math
from typing import Callable, Optional

import libcst as cst

from shapecheck.semantic.eval.autograd import grad_of, requested_grad
from shapecheck.semantic.eval.devices import device_kw, to_device
from shapecheck.semantic.eval.conv_sizes import CONV_LAYERS, POOL_LAYERS, layer_geometry, module_output
from shapecheck.semantic.eval.layer_ranks import RECURRENT_LAYERS, kept_shape, parameter_shape, recurrent_output
from shapecheck.semantic.eval.layout import layer_output_layout
from shapecheck.semantic.eval.linear_chains import chain_features
from shapecheck.semantic.eval.loss_weights import loss_weights
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import (
    BOOL, CONTIGUOUS, CPU, CUDA, FLOAT, INT, LEAF_REQUIRES_GRAD, MAYBE_CUDA, META, MODULE, MPS, NO_GRAD, NON_LEAF, STR,
    TENSOR, UNKNOWN, DeviceValue, DtypeKind, Fact, Grad,
)
from shapecheck.semantic.freeze_flow import fresh_layers_here
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.summaries import forward_of, reanalyse
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import (
    MODULE_METHODS_RETURNING_SELF, NN_BIAS_POSITIONS, NN_LAYER_PARAMETERS, NN_LOSS_MODULES, NN_PARAMETER_SWITCHES,
    NN_KEPT_DIMS, NN_RANK_ADDING_MODULES, NN_RANK_KEEPING_MODULES, NN_SHAPE_KEEPING_MODULES,
    NN_STATELESS_MODULES,
)
from shapecheck.shapes import Shape

#: what ``nn.<name>(...)`` holds: ``(parameter names or None, holds parameters or buffers,
#: holds parameters that require grad)``, the last two True/False/None
Contents = tuple[Optional[tuple[str, ...]], Optional[bool], Optional[bool]]

#: containers, whose layers may be classes of the file (their ``forward`` may move tensors)
_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})


def module_holds(f: Fact) -> Optional[bool]:
    """For a module fact: True when it holds parameters or buffers (so its device matters),
    False when it holds none, ``None`` when unknown."""
    if f.device is not None or f.params or f.trainable:
        return True
    if f.params == ():
        return False
    return None


def nn_class(ev: Eval, qual: str, name: str, expr: cst.Call) -> Optional[Fact]:
    """``torch.nn.<name>(...)``: a parameter, a buffer's data, or a module."""
    model = ev.model
    if name in ("Parameter", "UninitializedParameter"):
        args = CallArgs(expr)
        data = ev.fact(args.pos[0]) if args.pos else UNKNOWN
        grad = requested_grad(ev, args.get(1, "requires_grad"), LEAF_REQUIRES_GRAD)
        return data.with_(kind=TENSOR, grad=grad, reduction=None, is_scalar_cpu=False)
    if name in ("Buffer", "UninitializedBuffer"):
        args = CallArgs(expr)  # a tensor marked to be registered as a buffer: the data itself
        data = ev.fact(args.pos[0]) if args.pos else UNKNOWN
        return data.with_(kind=TENSOR, reduction=None, is_scalar_cpu=False) if data.kind == TENSOR \
            else Fact(kind=TENSOR)
    if name[:1].isupper() and not name.endswith("Options"):
        args = CallArgs(expr)
        weighted = loss_weights(ev, name, args) if name in NN_LOSS_MODULES else None
        if weighted is not None:  # its weight is a buffer: the loss is where that tensor is
            return Fact(kind=MODULE, qual="torch.nn." + name, device=weighted[1].device, params=weighted[0],
                        trainable=False, unreduced=_reduction_off(ev, name, args))
        params, holds, trainable = _nn_contents(ev, name, args)
        device: Optional[DeviceValue] = None
        if holds:
            device = device_kw(ev, args) if "device" in args.kw else (
                None if model.default_device_set else CPU)
            if name == "Sequential":
                device = _children_device(ev, args)
        if trainable and model.params_frozen and not fresh_layers_here(model):
            trainable = None
        fact = Fact(kind=MODULE, qual="torch.nn." + name, device=device, params=params,
                    trainable=trainable, unreduced=_reduction_off(ev, name, args) if name in NN_LOSS_MODULES else None)
        if name in ("Linear", "LazyLinear"):
            if name == "Linear":
                fin, fout = args.get(0, "in_features"), args.get(1, "out_features")
            else:
                fin, fout = None, args.get(0, "out_features")
            dims = tuple(ev.fact(a).dim if a is not None else None for a in (fin, fout))
            fact = fact.with_(features=dims)
        if name == "Sequential":
            fact = fact.with_(features=chain_features(ev, args), layers=_sequential_layers(ev, args))
        if name in _ADAPTIVE_POOLS and not args.starred and "return_indices" not in args.kw:
            size = args.get(0, "output_size")
            value = ev.fact(size).value if size is not None else None
            if type(size) is cst.Name and size.value == "None":
                value = None
            sizes = (value,) * _ADAPTIVE_POOLS[name] if type(value) is int else value
            if type(sizes) is tuple and len(sizes) == _ADAPTIVE_POOLS[name] \
                    and all(type(v) is int and v > 0 for v in sizes):
                fact = fact.with_(features=sizes)
        if name == "Flatten" and not args.starred:
            ends = [args.get(0, "start_dim"), args.get(1, "end_dim")]
            values = [default if end is None else ev.fact(end).value for end, default in zip(ends, (1, -1))]
            if all(type(v) is int for v in values):
                fact = fact.with_(features=tuple(values))
        if name in CONV_LAYERS or name in POOL_LAYERS:
            geometry = layer_geometry(ev, name, args)
            if geometry is not None:
                fact = fact.with_(features=geometry)
        if name in RECURRENT_LAYERS and not args.starred:
            first = args.get(4, "batch_first")
            if first is None or type(first) is cst.Name and first.value == "False":
                sizes = (args.get(0, "input_size"), args.get(1, "hidden_size"))
                fact = fact.with_(features=tuple(ev.fact(a).dim if a is not None else None for a in sizes))
        return fact
    return None


def nn_pretrained(ev: Eval, name: str, expr: cst.Call) -> Optional[Fact]:
    """``nn.Embedding.from_pretrained(embeddings, freeze=True)`` (or ``nn.EmbeddingBag``'s): a
    module whose weight is a parameter made from ``embeddings``, on that tensor's device, and
    trainable only with ``freeze=False``; ``None`` for other classes."""
    if name not in ("Embedding", "EmbeddingBag"):
        return None
    args = CallArgs(expr)
    embeddings = args.get(0, "embeddings")
    data = ev.fact(embeddings) if embeddings is not None else UNKNOWN
    freeze = args.get(1, "freeze")
    frozen = True if freeze is None else ev.fact(freeze).value
    trainable = (not frozen) if isinstance(frozen, bool) else None
    model = ev.model
    if trainable and model.params_frozen and not fresh_layers_here(model):
        trainable = None
    return Fact(kind=MODULE, qual="torch.nn." + name, device=data.device if data.kind == TENSOR else None,
                params=("weight",), trainable=trainable)


def reduction_off(fact_of: Callable[[cst.CSTNode], Fact], args: CallArgs) -> Optional[str]:
    """How a loss call or loss module construction with arguments ``args`` turns its reduction
    off, as messages write it: ``'reduction="none"'``, or the legacy ``'reduce=False'`` (which
    wins over ``size_average``); ``None`` when it does not. ``fact_of`` gives an argument's facts."""
    reduction = args.kw.get("reduction")
    if reduction is not None:
        return 'reduction="none"' if fact_of(reduction).value == "none" else None
    legacy = args.kw.get("reduce")
    return "reduce=False" if legacy is not None and fact_of(legacy).value is False else None


def _reduction_off(ev: Eval, name: str, args: CallArgs) -> Optional[str]:
    """How the loss module ``torch.nn.<name>(args)`` is built with its reduction off, as messages
    name it (``'nn.MSELoss(reduction="none")'``); ``None`` when it reduces or may."""
    spelled = reduction_off(ev.fact, args) if not args.starred else None
    return f"nn.{name}({spelled})" if spelled is not None else None


def _nn_contents(ev: Eval, name: str, args: CallArgs) -> Contents:
    """What ``torch.nn.<name>(args)`` holds (see :data:`Contents`)."""
    if name in NN_STATELESS_MODULES:
        return (), False, False
    if name in NN_LOSS_MODULES:
        plain = not args.starred and all(
            ev.fact(a).kind in (INT, FLOAT, STR, BOOL) or (type(a) is cst.Name and a.value == "None")
            for a in list(args.pos) + list(args.kw.values()))
        return ((), False, False) if plain else (None, None, None)
    if name == "Sequential":
        return _sequential(ev, args)
    names = NN_LAYER_PARAMETERS.get(name)
    if names is None:
        return None, None, None
    if args.starred:
        return None, True, True
    switch = NN_PARAMETER_SWITCHES.get(name)
    if switch is None:
        on = True
    else:
        flag = args.get(switch[1], switch[0])
        on = True if flag is None else ev.fact(flag).value
    if name.startswith(("BatchNorm", "SyncBatchNorm", "LazyBatchNorm")) and on is False:
        return (), True, False  # the running statistics are buffers
    if on is False:
        return (), False, False
    if on is not True:
        return None, None, None
    if "bias" in args.kw or (name in NN_BIAS_POSITIONS and len(args.pos) > NN_BIAS_POSITIONS[name]):
        bias = args.get(NN_BIAS_POSITIONS.get(name, -1), "bias")
        has_bias = ev.fact(bias).value if bias is not None else None
        if has_bias is not True:
            names = tuple(n for n in names if "bias" not in n)
    trainable = None if "_freeze" in args.kw or "_weight" in args.kw else True
    return names, True, trainable


def _sequential(ev: Eval, args: CallArgs) -> Contents:
    """``nn.Sequential(*layers)``: holds what its layers hold."""
    if args.starred or args.kw:
        return None, None, None
    holds: Optional[bool] = False
    trainable: Optional[bool] = False
    for a in args.pos:
        f = ev.fact(a)
        h = module_holds(f) if f.kind == MODULE else None
        if h is True:
            holds = True
        elif h is None and holds is False:
            holds = None
        if f.kind == MODULE and f.trainable:
            trainable = True
        elif trainable is False and not (f.kind == MODULE and f.trainable is False):
            trainable = None
    return (None if holds is not False else ()), holds, trainable


def _sequential_layers(ev: Eval, args: CallArgs) -> Optional[tuple[Fact, ...]]:
    """The facts of the layers of ``nn.Sequential(args)`` when each is a ``torch.nn`` layer given
    by itself (not starred, not an ``OrderedDict``)."""
    if args.starred or args.kw or not args.pos:
        return None
    layers = tuple(ev.fact(a) for a in args.pos)
    if any(f.kind != MODULE or f.qual is None or not f.qual.startswith("torch.nn.") for f in layers):
        return None
    return layers


def _children_device(ev: Eval, args: CallArgs) -> Optional[DeviceValue]:
    """The device of the layers of a ``Sequential`` that hold parameters, when they agree."""
    devices = {f.device for f in (ev.fact(a) for a in args.pos) if f.kind == MODULE and module_holds(f)}
    return devices.pop() if len(devices) == 1 else None


def local_module(ev: Eval, name: str) -> Fact:
    """An instance of ``name``, an ``nn.Module`` class of this file.

    Its parameters require grad when ``__init__`` assigned one to ``self`` (directly, or as a
    layer); it is on the CPU when it holds one, unless a method of the class moves ``self``
    (``self.cuda()``, ``self.to(...)``) or the file changes the default device.
    """
    model = ev.model
    holds = False
    trainable = None
    for f in model.class_attrs.get(name, {}).values():
        if f.kind == TENSOR and f.grad == LEAF_REQUIRES_GRAD:
            holds = trainable = True
        elif f.kind == MODULE and module_holds(f):
            holds = True
            if f.trainable:
                trainable = True
    placed = holds and not model.default_device_set and name not in model.class_moves
    return Fact(kind=MODULE, qual=name, device=CPU if placed else None,
                trainable=None if model.params_frozen else trainable)


def _rank_of(x: Fact) -> Optional[Shape]:
    """A shape of the rank (or rank bound) of ``x``'s, every size unknown."""
    shape = x.shape
    if shape is None or x.elems:
        return None
    return Shape((None,) * len(shape.dims), rest_at=shape.rest_at)


def layer_output_shape(module: Fact, x: Fact) -> Optional[Shape]:
    """The shape of ``module(x)`` for a ``torch.nn`` layer of one input: ``nn.Linear`` (also a
    ``Sequential`` of Linear layers), layers that keep the shape or the rank, convolutions and
    pooling of known geometry, embeddings; ``None`` when unknown."""
    shape = None
    qual = module.qual
    if qual in ("torch.nn.Linear", "torch.nn.LazyLinear") or (qual == "torch.nn.Sequential" and module.features):
        out_features = module.features[1] if module.features is not None else None
        if x.shape is not None and x.shape.rank is not None and x.shape.rank >= 1:
            shape = Shape(x.shape.dims[:-1] + (out_features,))
        elif x.shape is not None and x.shape.rest_at is not None and x.shape.rest_at < len(x.shape.dims) \
                and not x.elems:  # `(1, ..., 16)`: the last dim is known to be after the unknown ones
            shape = Shape(x.shape.dims[:-1] + (out_features,), rest_at=x.shape.rest_at)
        elif x.shape is None and x.kind in (TENSOR, None) and not x.elems and module.features is not None:
            shape = Shape((module.features[1],), rest_at=0)  # at least 1-D, ending in out_features
        else:
            shape = _rank_of(x)  # nn.Linear keeps its input's rank
    elif qual is not None and qual.startswith("torch.nn.") and qual.split(".")[-1] in NN_SHAPE_KEEPING_MODULES:
        shape = x.shape if x.kind in (TENSOR, None) and not x.elems else None
    elif qual is not None and qual.startswith("torch.nn.") and qual.split(".")[-1] in NN_RANK_KEEPING_MODULES:
        layer = qual.split(".")[-1]
        shape = kept_shape(x.shape, NN_KEPT_DIMS.get(layer), layer) if not x.elems else None
    if qual is not None and qual[9:] in _ADAPTIVE_POOLS and module.features is not None:
        n = _ADAPTIVE_POOLS[qual[9:]]
        if x.shape is None or x.shape.rank not in (n + 1, n + 2) or x.elems:
            return shape
        return Shape(x.shape.dims[:-n] + tuple(module.features))
    if qual == "torch.nn.Flatten":
        return _flattened(module.features, x) if module.features is not None and not x.elems else None
    if qual is not None and module.features is not None and not x.elems and x.kind in (TENSOR, None):
        shape = module_output(qual, module.features, x.shape) or shape  # known conv/pool sizes
    elif qual is not None and qual.startswith("torch.nn.") and qual.split(".")[-1] in NN_RANK_ADDING_MODULES:
        shape = Shape(x.shape.dims + (None,)) if x.shape is not None and x.shape.rank is not None else None
        if x.shape is None and x.kind in (TENSOR, None) and not x.elems:
            shape = Shape((None,), rest_at=0)  # the input's dims and the embedding dim
    return shape


#: adaptive pooling layers: how many trailing dims their ``output_size`` gives
_ADAPTIVE_POOLS = {f"Adaptive{kind}Pool{n}d": n for kind in ("Avg", "Max") for n in (1, 2, 3)}


def _flattened(ends: tuple, x: Fact) -> Optional[Shape]:
    """The shape ``nn.Flatten(start_dim, end_dim)`` (``ends``) gives ``x``, of known rank: the
    dims from start to end become one, their product when all are known."""
    if x.shape is None or x.shape.rank is None:
        return None
    dims = x.shape.dims
    rank = len(dims)
    start, end = (e + rank if e < 0 else e for e in ends)
    if not 0 <= start <= end < rank:
        return None
    merged = dims[start:end + 1]
    ints = [d for d in merged if isinstance(d, int)]
    size = math.prod(ints) if len(ints) == len(merged) else None
    return Shape(dims[:start] + (size,) + dims[end + 1:])


def sequential_step(layer: Fact, x: Fact) -> Optional[Shape]:
    """The shape ``layer`` (one layer of a ``Sequential``) gives ``x``, when known and valid: not
    at a recurrent layer (it returns a pair), and not when a size comes out below 1 or unknown
    from known ones (torch may raise there, at this layer)."""
    if layer.qual is not None and layer.qual[len("torch.nn."):] in RECURRENT_LAYERS:
        return None
    shape = layer_output_shape(layer, x)
    if shape is None or any(type(d) is int and d < 1 for d in shape.dims):
        return None
    if x.shape is not None and all(type(d) is int for d in x.shape.dims) and None in shape.dims:
        return None
    return shape


def _through_layers(layers: tuple[Fact, ...], x: Fact) -> Optional[Shape]:
    """The shape a ``Sequential`` of ``layers`` gives ``x``: each layer's output is the next one's
    input (``None`` as soon as one is unknown)."""
    current = x
    for layer in layers:
        shape = sequential_step(layer, current)
        if shape is None:
            return None
        current = Fact(kind=TENSOR, shape=shape)
    return current.shape


def module_call(ev: Eval, module: Fact, expr: cst.Call) -> Fact:
    """``module(x)``: the output's shape (``nn.Linear``, shape-keeping layers), device and grad."""
    args = CallArgs(expr)
    x = ev.fact(args.pos[0]) if args.pos else UNKNOWN
    qual = module.qual
    shape = layer_output_shape(module, x)
    if shape is None and module.layers is not None and x.kind in (TENSOR, None) and not x.elems:
        shape = _through_layers(module.layers, x)
    device: Optional[DeviceValue] = None
    if x.kind == TENSOR and module.params == ():
        device = x.device  # a module without parameters computes on its input's device
    elif x.kind == TENSOR and module.device is not None and x.device == module.device:
        device = module.device
    elif module.params and module.device in (CUDA, MPS, META, MAYBE_CUDA) and x.kind in (TENSOR, None):
        device = module.device  # its weights are there: whenever the call runs, so is its input
    elif x.kind is None and not x.elems and x.device in (CPU, CUDA, MPS, META, MAYBE_CUDA) and qual is not None \
            and qual.startswith("torch.nn.") and (qual not in _CONTAINERS or module.device == x.device):
        device = x.device  # `layer(batch.to(device))`: a layer computes where its input is (or raises)
    grad_enabled = ev.model.grad_enabled
    grad: Optional[Grad]
    if grad_enabled is False:
        grad = NO_GRAD
    elif module.trainable:
        grad = NON_LEAF if grad_enabled else None
    elif module.trainable is False and qual is not None and qual.startswith("torch.nn."):
        grad = grad_of(ev, [ev.fact(a) for a in args.pos] + [ev.fact(a) for a in args.kw.values()],
                       True) if not args.starred else None
    else:
        grad = None
    if qual is not None and qual.startswith("torch.nn.") and qual[9:] in RECURRENT_LAYERS and x.kind in (TENSOR, None):
        return recurrent_output(x, qual == "torch.nn.LSTM", module.features is not None, Fact(device=device, grad=grad))
    out = Fact(kind=TENSOR, shape=shape, device=device, grad=grad,
               layout=CONTIGUOUS if shape is not None and qual == "torch.nn.Linear" else None)
    if qual != "torch.nn.Linear" and x.kind in (TENSOR, None):
        out = layer_output_layout(qual[9:] if qual is not None and qual.startswith("torch.nn.") else None, x, out)
    if qual is not None and not qual.startswith("torch."):
        return _local_forward(ev, module, expr, out)
    return out


def _local_forward(ev: Eval, module: Fact, expr: cst.Call, out: Fact) -> Fact:
    """``module(x)`` for an instance of a module class of this file: what its ``forward``
    returns given the call's arguments (re-analysed), completed with ``out``, what the module's
    parameters alone say of the result."""
    callee = forward_of(ev.model, module.qual)
    result = reanalyse(ev, callee, expr, module) if callee is not None else None
    if result is None or result.kind is None:
        return out
    if result.kind != TENSOR:
        return result
    return result.with_(device=result.device if result.device is not None else out.device,
                        grad=result.grad if result.grad is not None else out.grad)


def module_method(ev: Eval, recv: Fact, name: str, expr: cst.Call) -> Fact:
    """``module.<name>(...)``: the methods that return the module itself, and ``forward``."""
    args = CallArgs(expr)
    if name in MODULE_METHODS_RETURNING_SELF:
        placed = module_holds(recv)
        if name == "cuda":
            return recv.with_(device=CUDA if placed else None)
        if name == "cpu":
            return recv.with_(device=CPU if placed else None)
        if name == "to":
            dev = to_device(ev, args)
            return recv.with_(device=dev if placed else None) if dev is not False else recv
        if name == "to_empty":  # fresh storage on the device it names (a module built on meta)
            dev = device_kw(ev, args)
            return recv.with_(device=dev if placed and dev is not None else None)
        if name == "requires_grad_":
            flag = args.get(0, "requires_grad")
            v = ev.fact(flag).value if flag is not None else True
            if v is False:
                return recv.with_(trainable=False)
            if recv.params == () and recv.trainable is False:
                return recv  # it holds no parameter: nothing to switch
            if v is True and (recv.params or recv.trainable):
                return recv.with_(trainable=True)
            return recv.with_(trainable=None)
        return recv
    if name == "forward":
        return module_call(ev, recv, expr)
    return UNKNOWN


def module_attr(ev: Eval, module: Fact, attr: str) -> Fact:
    """``model.weight`` of a ``torch.nn`` layer; ``model.<x>`` that ``__init__`` of a class of
    this file assigned (a parameter, a submodule); else unknown."""
    qual = module.qual
    if qual is None:
        return UNKNOWN
    if qual.startswith("torch.nn."):
        if module.params is None or attr not in module.params:
            return UNKNOWN
        trainable = module.trainable
        grad = LEAF_REQUIRES_GRAD if trainable is True else (NO_GRAD if trainable is False else None)
        return Fact(kind=TENSOR, device=module.device, dtype_kind=DtypeKind.FLOAT, grad=grad,
                    placed_by=module.placed_by, shape=parameter_shape(qual[9:], attr))
    model = ev.model
    table = model.class_attrs.get(qual)
    f = table.get("self." + attr) if table is not None else None
    if f is None:
        return UNKNOWN
    if f.kind == TENSOR and "self." + attr in model.class_fixed.get(qual, ()):
        return f  # a plain tensor attribute: moving the module left it where it was made
    if f.kind == TENSOR and "self." + attr not in model.class_moving.get(qual, ()):
        return f.with_(device=None, grad=None if model.params_frozen else f.grad, is_scalar_cpu=False)
    if f.kind == TENSOR:
        grad = None if model.params_frozen else f.grad
        return f.with_(device=module.device, grad=grad, is_scalar_cpu=False, placed_by=module.placed_by)
    if f.kind == MODULE:
        holds = module_holds(f)
        return f.with_(device=module.device if holds else None,
                       trainable=None if model.params_frozen else f.trainable)
    return f


def is_module_class(model: SemanticModel, node: cst.ClassDef) -> Optional[bool]:
    """Whether class ``node`` subclasses ``nn.Module`` (directly or through a class of the
    file): True, False, or None when a base is unknown."""
    if not node.bases:
        return False
    verdicts: list[Optional[bool]] = []
    for base in node.bases:
        if base.keyword is not None:
            continue
        qual = model.imports.resolve(base.value)
        if qual is not None and qual.startswith("torch.nn.") and qual.split(".")[-1][:1].isupper():
            if qual.split(".")[-1] in ("Parameter",):
                verdicts.append(False)
                continue
            return True
        if type(base.value) is cst.Name:
            local = model.classes.get(base.value.value, "missing")
            if local is True:
                return True
            if base.value.value == "object" or local is False:
                verdicts.append(False)
                continue
        verdicts.append(None)
    if verdicts and all(v is False for v in verdicts):
        return False
    return None
