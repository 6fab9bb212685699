"""RFFT and ComplexAbs. The IR has no complex values: the magnitude of a real
FFT, |RFFT(x)|, is computed from two real matmuls by constant cosine and sine
matrices, sqrt(re^2 + im^2). An RFFT whose complex result is read by
anything but ComplexAbs is refused."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import tf_mapper


def _readers(ctx, value: str) -> list:
    return [op for op in ctx.source.ops if value in op.inputs]


@tf_mapper("RFFT")
def rfft(ctx, op):
    """Nothing: its ComplexAbs readers compute the magnitude from RFFT's input."""
    others = [r for r in _readers(ctx, op.outputs[0]) if r.type != "ComplexAbs"]
    if others or op.outputs[0] in ctx.source.outputs:
        what = ", ".join(f"{r.type} '{r.name}'" for r in others) or "a graph output"
        raise ConversionError(
            f"RFFT '{op.name}': its complex result is read by {what}; x2 has no complex "
            f"tensors and converts an RFFT only when every reader takes its magnitude "
            f"(ComplexAbs, e.g. tf.abs(tf.signal.rfft(x)) in a spectrogram)")


@tf_mapper("ComplexAbs")
def complex_abs(ctx, op):
    """|RFFT(x)| over the last axis: sqrt((x @ cos)^2 + (x @ sin)^2)."""
    fft = next((p for p in ctx.source.ops if op.inputs[0] in p.outputs), None)
    if fft is None or fft.type != "RFFT":
        raise ConversionError(f"ComplexAbs '{op.name}': only the magnitude of an RFFT is "
                              f"supported (x2 has no complex tensors)")
    x, length_value = fft.inputs[:2]
    n = int(ctx.require_const(length_value, "the fft_length")[0])
    shape = ctx.shape(x)
    dtype = ctx.dtype(x)
    size = shape[-1]
    if size != n:  # TF crops or zero-pads the last axis to fft_length
        pads = [0] * (2 * len(shape))
        pads[-1] = max(n - size, 0)
        x = ctx.emit("pad", [x], {"pads": pads}, shape=tuple(shape[:-1]) + (max(n, size),),
                     hint="fit") if n > size else x
        x = ctx.emit("slice", [x], {"starts": [0], "ends": [n], "axes": [len(shape) - 1],
                                    "steps": [1]}, shape=tuple(shape[:-1]) + (n,), hint="fit")
    # float64 angles, reduced mod n first: exact enough for long windows in float32.
    angle = 2 * np.pi * ((np.arange(n)[:, None] * np.arange(n // 2 + 1)[None, :]) % n) / n
    out_shape = tuple(shape[:-1]) + (n // 2 + 1,)
    parts = []
    for name, table in (("re", np.cos(angle)), ("im", np.sin(angle))):
        part = ctx.emit("matmul", [x, ctx.constant(table.astype(dtype), name)], shape=out_shape,
                        hint=name)
        parts.append(ctx.emit("mul", [part, part], shape=out_shape, hint=f"{name}2"))
    power = ctx.emit("add", parts, shape=out_shape, hint="power")
    ctx.emit("sqrt", [power], outputs=op.outputs)
