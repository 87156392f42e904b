"""The pieces an SB3 model is counted in, without torch: networks (MLP stacks), optimizers, a NatureCNN.

Each network family of ``core.estimate.families`` (SB3's and sb3-contrib's) builds a ``ModelShape`` of
these for a config.
"""

from __future__ import annotations

from dataclasses import dataclass

FLOAT = 4  # SB3 trains in float32 (no AMP)
# Activations whose backward needs their input as well as their output (tanh and relu keep
# only their output, which the next Linear keeps anyway).
SAVES_INPUT = {"elu", "leaky_relu", "gelu", "silu"}
ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
            "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1}


def itemsize(dtype: str) -> int:
    return ITEMSIZE.get(dtype, 8)


@dataclass(frozen=True)
class Network:
    """One module SB3 holds: its sizes, parameter count and whether it trains."""

    name: str
    params: int
    tensors: int
    trainable: bool
    stacks: tuple[tuple[int, ...], ...] = ()  # (input, hidden..., output) of each MLP inside


@dataclass(frozen=True)
class Optimizer:
    name: str
    kind: str  # "adam" | "adamw" | "rmsprop" | "rmsprop_tf_like" | "sgd"
    params: int
    tensors: int

    @property
    def state_bytes(self) -> int:
        """What torch keeps after the first step. Adam/AdamW: exp_avg, exp_avg_sq and a step tensor per
        parameter tensor; RMSprop: square_avg and a step tensor; SB3's RMSpropTFLike: square_avg (its
        step is a Python int); SGD without momentum: nothing. The 4-byte steps are on the CPU unless
        capturable; counted with the rest, they are a few hundred bytes."""
        moments = {"adam": 2, "adamw": 2, "rmsprop": 1, "rmsprop_tf_like": 1}.get(self.kind, 0)
        step = self.kind in ("adam", "adamw", "rmsprop")
        return moments * FLOAT * self.params + (FLOAT * self.tensors if step else 0)


@dataclass(frozen=True)
class ModelShape:
    networks: tuple[Network, ...]
    optimizers: tuple[Optimizer, ...]
    cnn: Cnn | None = None  # the NatureCNN in front of the networks, if any

    @property
    def param_count(self) -> int:
        """Every parameter SB3 holds: ``policy.parameters()`` plus SAC's ``log_ent_coef``."""
        return sum(n.params for n in self.networks)

    @property
    def trainable_count(self) -> int:
        return sum(n.params for n in self.networks if n.trainable)

    @property
    def optimizer_bytes(self) -> int:
        return sum(o.state_bytes for o in self.optimizers)

    def network(self, name: str) -> Network:
        return next(n for n in self.networks if n.name == name)


@dataclass(frozen=True)
class Cnn:
    """SB3's NatureCNN on a (C, H, W) image: three convolutions and a Linear to 512 features."""

    params: int
    tensors: int
    activations: int  # floats per sample its forward keeps (conv outputs, features)
    features: int = 512


def nature_cnn(chw: tuple[int, int, int], features: int = 512) -> Cnn:
    """Conv(C->32, 8, stride 4), Conv(32->64, 4, 2), Conv(64->64, 3, 1), ReLUs, Flatten, Linear(n, 512), ReLU."""
    c, h, w = chw
    image = c * h * w  # the image as floats (divided by 255 before the first convolution)
    params, acts = 0, 0
    for c_in, c_out, k, stride in ((c, 32, 8, 4), (32, 64, 4, 2), (64, 64, 3, 1)):
        h, w = (h - k) // stride + 1, (w - k) // stride + 1
        params += c_in * c_out * k * k + c_out
        acts += c_out * h * w
        c = c_out
    flat = c * h * w
    params += flat * features + features
    return Cnn(params, 8, image + acts + features, features)


def stack_size(sizes: tuple[int, ...]) -> tuple[int, int]:
    """Parameters and tensors of Linear layers between consecutive ``sizes``."""
    params = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
    return params, 2 * (len(sizes) - 1)


def network(name: str, stacks: list[tuple[int, ...]], trainable: bool = True, extra_params: int = 0,
             extra_tensors: int = 0) -> Network:
    params = sum(stack_size(s)[0] for s in stacks) + extra_params
    tensors = sum(stack_size(s)[1] for s in stacks) + extra_tensors
    return Network(name, params, tensors, trainable, tuple(stacks))
