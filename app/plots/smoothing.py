"""TensorBoard's smoothing: an exponential moving average with its start debiased.

``weight`` 0 is no smoothing, 0.999 nearly a flat line (TensorBoard's slider goes 0 to 0.999).
Like TensorBoard, the average starts at the first value instead of at zero (the debias factor
``1 - weight**n``); a missing value (NaN) stays missing and does not move the average.
"""

from __future__ import annotations

import math

import numpy as np

MAX_WEIGHT = 0.999


class Ema:
    """A derived-series function: ``ema(values, start)`` gives the smoothed ``values[start:]``.

    It keeps the average reached at ``start``; ``start == 0`` starts over.
    """

    def __init__(self, weight: float):
        if not 0.0 <= weight <= MAX_WEIGHT:
            raise ValueError(f"smoothing {weight!r}: use 0 (none) to {MAX_WEIGHT}")
        self.weight = weight
        self._last = 0.0
        self._count = 0

    def __call__(self, values: np.ndarray, start: int) -> np.ndarray:
        if start == 0:
            self._last, self._count = 0.0, 0
        w, last, count = self.weight, self._last, self._count
        new = values[start:].tolist()
        out = np.empty(len(new))
        for i, v in enumerate(new):
            if not math.isfinite(v):
                out[i] = math.nan
                continue
            last = last * w + (1.0 - w) * v
            count += 1
            out[i] = last / (1.0 - w**count) if w else v
        self._last, self._count = last, count
        return out
