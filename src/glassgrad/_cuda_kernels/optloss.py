"""Fused CuPy kernels for the optimizer steps and the losses of a training step on a GPU (see the package's
docstring for how they are built, switched off and tested):

  * sgd_step: optim/sgd.py's update of one parameter (maximize, weight decay, momentum with dampening, nesterov)
    in one ElementwiseKernel, in the array code's rounding steps (its fused multiply-adds through double), so the
    parameter and the momentum buffer are bit-equal to the array code's;
  * nll_forward / nll_backward: ops/loss.py's _nll_core (the target checked and clipped, the class weights picked,
    the loss, its sum / weighted mean and the gradient's coefficients: ~25 launches as array code) in one kernel of
    one block, and NllLossBackward0's gradient (the one-hot mask times the incoming gradient) in one;
  * sq_partials / grad_norms / scale_by_clip: nn/utils/clip_grad's 2-norms (a kernel per gradient for the partial
    sums of squares, one for all the norms and the total) and the clip (a kernel per gradient).

Elementwise work is done in the array code's rounding steps (bit-equal); the sums run in a per-thread then tree
order (the array code's is NumPy's / CuPy's / BLAS's), in the array code's accumulation dtype.
"""
import numpy as np

from . import _cp, _kernel

__all__ = ["sgd_step", "nll_forward", "nll_backward", "sq_partials", "grad_norms", "scale_by_clip"]

_FMAD = ("--fmad=false",)

# -- SGD ------------------------------------------------------------------------------------------------------
# optim/sgd.py's step: d = -g if maximize; d = fma(x, wd, d) (add_alpha(g, p, wd)); the momentum buffer
# b = d on the first step, else b = b * mom then fma(d, 1 - dampening, b); u = nesterov ? fma(b, mom, d) : b;
# x = fma(u, -lr, x).  optimizer.py's _fma on a device: float32 through double (the product exact, one rounding
# to double, one to float), float64 product and sum rounded each (CuPy has no long double).
_SGD_HEAD = """
T d = (flags & 1) ? (T)(-g) : g;
if (flags & 2) d = (T)((double)x * (double)wd + (double)d);
"""
_SGD_MOMENTUM = """
T b;
if (flags & 8) {
    b = d;
} else {
    b = buf * mom;
    b = (T)((double)d * (double)omd + (double)b);
}
buf = b;
T u = (flags & 4) ? (T)((double)b * (double)mom + (double)d) : b;
x = (T)((double)u * (double)nlr + (double)x);
"""
_SGD_PLAIN = """
x = (T)((double)d * (double)nlr + (double)x);
"""


def sgd_step(g, x, buf, wd, mom, omd, nlr, maximize, nesterov, first):
    """One SGD update of parameter `x` (and momentum buffer `buf`, or None without momentum) in place, from
    gradient `g` (float32 / float64 device arrays of x's shape and dtype; the scalars in x's dtype, wd None
    without weight decay).  On the first momentum step `buf` is a fresh array the kernel fills."""
    flags = np.int32((1 if maximize else 0) | (2 if wd is not None else 0) | (4 if nesterov else 0)
                     | (8 if first else 0))
    zero = x.dtype.type(0)
    wd = zero if wd is None else wd
    if buf is None:
        k = _kernel("sgd", lambda cp: cp.ElementwiseKernel(
            "T g, T wd, T nlr, int32 flags", "T x", _SGD_HEAD + _SGD_PLAIN, "glassgrad_sgd", options=_FMAD))
        k(g, wd, nlr, flags, x)
    else:
        k = _kernel("sgd_momentum", lambda cp: cp.ElementwiseKernel(
            "T g, T wd, T mom, T omd, T nlr, int32 flags", "T x, T buf", _SGD_HEAD + _SGD_MOMENTUM,
            "glassgrad_sgd_momentum", options=_FMAD))
        k(g, wd, mom, omd, nlr, flags, x, buf)
