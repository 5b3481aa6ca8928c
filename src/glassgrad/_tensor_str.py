"""PyTorch-compatible tensor printing for NumPy-backed tensors.

This module reproduces, byte for byte, the text that ``repr(torch_tensor)``
(and ``str(torch_tensor)``, which is the same) produces for dense, strided
tensors.  It works purely on NumPy arrays; the Tensor class supplies the
metadata (dtype name, device, autograd state) via :func:`tensor_repr`.

Rules implemented (as observed in torch 2.x):

* Print options: ``precision`` (4), ``threshold`` (1000), ``edgeitems`` (3),
  ``linewidth`` (80) and ``sci_mode`` (None = automatic), with the
  ``'default'``, ``'short'`` and ``'full'`` profiles.
* A single formatter is built for the whole tensor (or for the summarised
  edge data when ``numel > threshold``) so every element shares one width.
  For floating tensors only the finite, non-zero values decide the layout:

  - "int mode" when all of them are integral (printed as ``1.``),
  - scientific notation when ``max/min > 1000``, ``max > 1e8`` or
    ``min < 1e-4`` (absolute values) unless ``sci_mode`` forces it,
  - otherwise fixed notation with ``precision`` decimals.

  If there is no finite non-zero value at all, elements are printed in int
  mode with no padding, regardless of ``sci_mode``.
* Rows are wrapped so that ``linewidth`` is respected, nested dimensions are
  separated by ``dim - 1`` newlines and indented to the bracket depth.
* Suffixes (device, size, dtype, grad_fn / requires_grad) are appended after
  the data and moved onto their own line when the current line would exceed
  ``linewidth``.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

__all__ = [
    "set_printoptions",
    "get_printoptions",
    "printoptions",
    "tensor_repr",
    "tensor_str",
]


# ---------------------------------------------------------------------------
# print options
# ---------------------------------------------------------------------------

_OPTION_NAMES = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

_opts = {
    "precision": 4,
    "threshold": 1000,
    "edgeitems": 3,
    "linewidth": 80,
    "sci_mode": None,
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Set printing options; same semantics as ``torch.set_printoptions``.

    ``profile`` ('default', 'short' or 'full') is applied first, then any
    explicitly given option overrides it.  Like torch, ``sci_mode`` is always
    assigned, so omitting it resets it to ``None`` (automatic).  An unknown
    profile name is silently ignored, as in torch.
    """
    if profile is not None and profile in _PROFILES:
        _opts.update(_PROFILES[profile])
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            _opts[name] = value
    _opts["sci_mode"] = sci_mode


def get_printoptions() -> dict:
    """Current print options as a dict usable as ``set_printoptions(**d)``."""
    return {name: _opts[name] for name in _OPTION_NAMES}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that temporarily changes the print options."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------------------
# element formatting
# ---------------------------------------------------------------------------


def _width_candidates(vals):
    """Values among ``vals`` (finite, non-zero float64) whose formatted text
    is the longest in both fixed and scientific notation.

    Python's float formatting is correctly rounded, hence monotone in the
    absolute value: the number of integer digits (fixed notation) and the
    magnitude of the exponent (scientific notation) are extremal at the
    smallest or largest magnitude.  The sign adds one character, so the
    extremes are taken separately for positive and negative values.
    """
    out = []
    pos = vals[vals > 0]
    neg = vals[vals < 0]
    for part in (pos, neg):
        if part.size:
            out.append(float(part.min()))
            out.append(float(part.max()))
    return out


class _Formatter:
    """Shared element formatter for one tensor (see module docstring)."""

    def __init__(self, values, kind):
        # values: 1-d ndarray with the (possibly summarised) elements.
        # kind: 'f' floating, 'i' integer, 'b' bool.
        self.floating = kind in "fV"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        precision = _opts["precision"]

        if not self.floating:
            if values.size:
                if kind == "b":
                    longest = 5 if not values.all() else 4
                else:
                    longest = max(len(str(int(values.min()))), len(str(int(values.max()))))
                self.max_width = max(self.max_width, longest)
            return

        vals = values.astype(np.float64, copy=False)
        vals = vals[np.isfinite(vals) & (vals != 0)]
        if vals.size == 0:
            # Only zeros / non-finite values: int mode, width 1, and the
            # sci_mode option is not consulted.
            return

        absvals = np.abs(vals)
        vmin = float(absvals.min())
        vmax = float(absvals.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))

        forced = _opts["sci_mode"]
        if forced is None:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        else:
            self.sci_mode = bool(forced)

        cands = _width_candidates(vals)
        if self.sci_mode:
            spec = "." + str(precision) + "e"
            extra = 0
        elif self.int_mode:
            # one more character for the trailing '.'
            spec = ".0f"
            extra = 1
        else:
            spec = "." + str(precision) + "f"
            extra = 0
        for v in cands:
            self.max_width = max(self.max_width, len(format(v, spec)) + extra)

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating:
            precision = _opts["precision"]
            if self.sci_mode:
                text = format(value, str(self.max_width) + "." + str(precision) + "e")
            elif self.int_mode:
                text = format(value, ".0f")
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = format(value, "." + str(precision) + "f")
        else:
            text = str(value)
        pad = self.max_width - len(text)
        if pad > 0:
            text = " " * pad + text
        return text


class _ComplexFormatter:
    """Pair of formatters (real part, imaginary part) for complex tensors."""

    def __init__(self, values):
        self.real = _Formatter(values.real, "f")
        self.imag = _Formatter(values.imag, "f")

    def width(self):
        # the imaginary part carries a trailing 'j'
        return self.real.width() + self.imag.width() + 1

    def format(self, value):
        value = complex(value)
        real_text = self.real.format(value.real)
        imag_text = (self.imag.format(value.imag) + "j").lstrip()
        if imag_text[0] in "+-":
            return real_text + imag_text
        return real_text + "+" + imag_text


def _summary_values(arr, edgeitems):
    """Flat array of the elements shown when the tensor is summarised."""
    if arr.ndim == 0:
        return arr.reshape(-1)
    if arr.ndim == 1:
        if arr.shape[0] > 2 * edgeitems:
            # note: arr[-0:] is the whole array, mirroring torch for edgeitems=0
            return np.concatenate((arr[:edgeitems], arr[-edgeitems:]))
        return arr
    if not edgeitems:
        return arr.reshape(-1)[:0]
    if arr.shape[0] > 2 * edgeitems:
        rows = list(range(edgeitems)) + list(range(arr.shape[0] - edgeitems, arr.shape[0]))
    else:
        rows = range(arr.shape[0])
    parts = [_summary_values(arr[i], edgeitems) for i in rows]
    return np.concatenate([p.reshape(-1) for p in parts])


# ---------------------------------------------------------------------------
# layout
# ---------------------------------------------------------------------------


def _vector_str(arr, indent, summarize, formatter):
    opts = _opts
    element_length = formatter.width() + 2
    elements_per_line = max(1, math.floor((opts["linewidth"] - indent) / element_length))
    edgeitems = opts["edgeitems"]
    fmt = formatter.format

    if summarize and not edgeitems:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edgeitems:
        data = (
            [fmt(v) for v in arr[:edgeitems].tolist()]
            + [" ..."]
            + [fmt(v) for v in arr[-edgeitems:].tolist()]
        )
    else:
        data = [fmt(v) for v in arr.tolist()]

    lines = [
        ", ".join(data[i : i + elements_per_line])
        for i in range(0, len(data), elements_per_line)
    ]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(arr, indent, summarize, formatter):
    ndim = arr.ndim
    if ndim == 0:
        return formatter.format(arr.item())
    if ndim == 1:
        return _vector_str(arr, indent, summarize, formatter)

    edgeitems = _opts["edgeitems"]
    n = arr.shape[0]
    if summarize and n > 2 * edgeitems:
        slices = (
            [_nested_str(arr[i], indent + 1, summarize, formatter) for i in range(edgeitems)]
            + ["..."]
            + [
                _nested_str(arr[i], indent + 1, summarize, formatter)
                for i in range(n - edgeitems, n)
            ]
        )
    else:
        slices = [_nested_str(arr[i], indent + 1, summarize, formatter) for i in range(n)]
    sep = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(slices) + "]"


def _tensor_body(arr, indent):
    """The bracketed data part of the repr (no prefix, no suffixes)."""
    if arr.size == 0:
        return "[]"
    summarize = arr.size > _opts["threshold"]
    kind = arr.dtype.kind
    e8m0 = arr.dtype.name == "float8_e8m0fnu"
    if kind == "c":
        arr = arr.astype(np.complex128, copy=False)
    elif kind in "fV":
        # float16/float32 -> float64 is exact; values are formatted as
        # Python floats exactly like torch's ``.item()`` / ``.tolist()``.
        arr = arr.astype(np.float64, copy=False)
    elif kind == "b":
        pass
    elif kind in "iu":
        pass
    else:
        raise TypeError(f"unsupported dtype for printing: {arr.dtype}")

    values = _summary_values(arr, _opts["edgeitems"]) if summarize else arr.reshape(-1)
    if e8m0:       # torch finds the zeros by comparing with 0 converted to e8m0: its smallest value, 2**-127
        values = np.where(values == 2.0 ** -127, 0.0, values)
    if kind == "c":
        formatter = _ComplexFormatter(values)
    else:
        formatter = _Formatter(values, "f" if kind in "fV" else ("b" if kind == "b" else "i"))
    return _nested_str(arr, indent, summarize, formatter)


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    # torch measures "the last line" as len - rfind('\n') + 1 (which is
    # len + 2 when there is no newline); reproduce that exactly.
    last_line_len = len(text) - text.rfind("\n") + 1
    linewidth = _opts["linewidth"]
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(
    arr,
    *,
    dtype_name,
    dtype_is_default,
    device=None,
    grad_fn_name=None,
    requires_grad=False,
    is_parameter=False,
) -> str:
    """Return exactly what ``repr(t)`` (== ``str(t)``) gives for a torch tensor.

    arr              -- NumPy array holding the data (any layout, 0-d ok).
    dtype_name       -- torch-style dtype name, e.g. ``'torch.float64'``.
    dtype_is_default -- True when torch omits ``dtype=`` for non-empty
                        tensors: the default float dtype (or default complex
                        dtype), int64 and bool.  For *empty* tensors torch
                        only omits it for the default floating dtype; this is
                        derived as ``dtype_is_default and arr is floating``.
    device           -- None for the default device (CPU), otherwise a
                        string such as ``'cuda:0'``.
    grad_fn_name     -- e.g. ``'MmBackward0'``; printed as ``grad_fn=<...>``.
    requires_grad    -- printed as ``requires_grad=True`` when there is no
                        grad_fn.
    is_parameter     -- prefix ``'Parameter containing:\\n'`` like
                        ``nn.Parameter.__repr__`` (pass ``requires_grad``
                        as the parameter's flag, normally True).
    """
    arr = np.asarray(arr)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device is not None:
        suffixes.append("device='" + str(device) + "'")

    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append("size=" + str(tuple(int(s) for s in arr.shape)))
        is_default_float = bool(dtype_is_default) and arr.dtype.kind in "fV"
        if not is_default_float:
            suffixes.append("dtype=" + dtype_name)
        body = "[]"
    else:
        if not _opts["edgeitems"]:
            suffixes.append("size=" + str(tuple(int(s) for s in arr.shape)))
        if not dtype_is_default:
            suffixes.append("dtype=" + dtype_name)
        body = _tensor_body(arr, indent)

    if grad_fn_name is not None:
        suffixes.append("grad_fn=<" + grad_fn_name + ">")
    elif requires_grad:
        suffixes.append("requires_grad=True")

    text = _add_suffixes(prefix + body, suffixes, indent)
    if is_parameter:
        text = "Parameter containing:\n" + text
    return text


# str(tensor) is the same as repr(tensor) in torch.
tensor_str = tensor_repr
