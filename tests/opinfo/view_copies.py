"""Op table rows: the `*_copy` forms of the view ops, the `*_scatter` ops, slice_inverse and torch.fill
(ops/view_copies.py) -- values, grad_fn names (`PermuteBackward0_copy`, ...) and gradients against torch."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, NoGrad, arr, noncontig
from .views import _many


def _e(*items):
    return lambda: [ErrorSample(Sample(*args), err, msg) for args, err, msg in items]


Z = np.zeros


def _fn(name):
    return lambda T, a, *args: getattr(T, name)(a, *args)


def _plus(gen, extra):
    return lambda rng, dt: gen(rng, dt) + extra(rng, dt)


def _scatter(*specs):
    """specs: (input shape, src shape, extra args[, nc])"""
    def gen(rng, dt):
        out = []
        for sp in specs:
            a, b = arr(rng, sp[0], dt), arr(rng, sp[1], dt)
            if len(sp) > 3 and sp[3]:
                a = noncontig(a)
            out.append(Sample(a, b, *sp[2], name=f"{sp[0]}{sp[1]}{sp[2]}"))
        return out
    return gen


OPS = [
    OpInfo("alias_copy", _fn("alias_copy"), _many(((3, 4), ()), ((), ()), ((4, 3), (), True))),
    OpInfo("as_strided_copy", _fn("as_strided_copy"),
           _many(((3, 4), ((2, 2), (1, 2))), ((3, 4), ((2, 3), (1, 2), 1)), ((3, 4), ((3, 3), (1, 1)))),
           gradgrad=False),      # double backward through as_strided is not implemented (as the as_strided rows)
    OpInfo("diagonal_copy", _fn("diagonal_copy"), _many(((3, 4), ()), ((3, 4), (1,)), ((2, 3, 4), (-1, 0, 2)))),
    OpInfo("expand_copy", _fn("expand_copy"), _many(((3, 1), ((3, 4),)), ((), ((2, 3),)), ((4,), ((2, -1),)))),
    OpInfo("narrow_copy", _fn("narrow_copy"), _many(((5, 4), (0, 1, 3)), ((5, 4), (1, -3, 2)), ((4, 3), (1, 0, 2), True)),
           errors=_e(((Z((5, 4)), 0, 3, 3), RuntimeError, "start (3) + length (3) exceeds dimension size (5)."))),
    OpInfo("Tensor.narrow_copy", lambda T, a, *args: a.narrow_copy(*args), _many(((5, 4), (1, 1, 2)))),
    OpInfo("permute_copy", _fn("permute_copy"), _many(((2, 3, 4), ((2, 0, 1),)), ((4, 3), ((1, 0),), True)),
           errors=_e(((Z((2, 3)), (0, 0)), RuntimeError, "duplicate dims are not allowed"))),
    OpInfo("select_copy", _fn("select_copy"), _many(((3, 4), (0, 1)), ((3, 4), (1, -1)), ((3,), (0, 2))),
           errors=_e(((Z((3, 4)), 0, 5), IndexError, "index 5 out of range for tensor of size [3, 4] at dimension 0"))),
    OpInfo("slice_copy", _fn("slice_copy"),
           _many(((5, 4), ()), ((5, 4), (1, 1, 3)), ((5, 4), (0, -4, None, 2)), ((5, 4), (1, None, 100)),
                 ((4, 3), (0, 1, 3), True)),
           errors=_e(((Z((5, 4)), 0, 0, 4, 0), RuntimeError, "slice step must be positive"))),
    OpInfo("split_copy", _fn("split_copy"), _many(((5, 4), (2,)), ((5, 4), (3, 1)))),
    OpInfo("split_with_sizes_copy", _fn("split_with_sizes_copy"), _many(((5, 4), ([2, 3],)), ((5, 4), ((1, 0, 3), 1))),
           errors=_e(((Z((5, 4)), [2, 2]), RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 5"))),
    OpInfo("squeeze_copy", _fn("squeeze_copy"), _many(((3, 1, 4, 1), ()), ((3, 1, 4), (1,)), ((1, 3, 1), ((0, 2),)))),
    OpInfo("t_copy", _fn("t_copy"), _many(((3, 4), ()), ((3,), ()), ((4, 3), (), True))),
    OpInfo("transpose_copy", _fn("transpose_copy"), _many(((3, 4), (0, 1)), ((2, 3, 4), (-1, 0))),
           errors=_e(((Z((3, 4)), 0, 2), IndexError, "Dimension out of range"))),
    OpInfo("unbind_copy", _fn("unbind_copy"), _many(((3, 4), ()), ((3, 4), (1,)))),
    OpInfo("unfold_copy", _fn("unfold_copy"), _many(((7,), (0, 3, 2)), ((4, 6), (1, 2, 2)))),
    OpInfo("unsqueeze_copy", _fn("unsqueeze_copy"), _many(((3, 4), (0,)), ((3, 4), (-1,)), ((), (0,)))),
    OpInfo("view_copy", _fn("view_copy"), _many(((3, 4), ((12,),)), ((3, 4), ((2, -1),)), ((), ((1, 1),))),
           errors=_e(((Z((3, 4)), (5,)), RuntimeError, "shape '[5]' is invalid for input of size 12"))),
    OpInfo("diagonal_scatter", _fn("diagonal_scatter"),
           _scatter(((3, 4), (3,), ()), ((3, 4), (3,), (1,)), ((2, 3, 4), (3, 2), (0, 0, 2)), ((4, 3), (3,), (), True)),
           errors=_e(((Z((3, 4)), Z((4,))), RuntimeError, "expected src to have a size equal to the slice of self. "
                                                          "src size = [4], slice size = [3]"))),
    OpInfo("Tensor.diagonal_scatter", lambda T, a, b: a.diagonal_scatter(b, -1), _scatter(((3, 4), (2,), ()))),
    OpInfo("select_scatter", _fn("select_scatter"),
           _scatter(((3, 4), (4,), (0, 1)), ((3, 4), (3,), (1, -1)), ((3,), (), (0, 2)), ((4, 3), (3,), (0, 0), True)),
           errors=_e(((Z((3, 4)), Z((4,)), 0, 5), IndexError, "index 5 out of range for tensor of size [3, 4]"),
                     ((Z((3, 4)), Z((3,)), 0, 1), RuntimeError, "src size = [3], slice size = [4]"))),
    OpInfo("Tensor.select_scatter", lambda T, a, b: a.select_scatter(b, 1, 0), _scatter(((3, 4), (3,), ()))),
    OpInfo("slice_scatter", _fn("slice_scatter"),
           _scatter(((3, 4), (3, 4), ()), ((3, 4), (3, 2), (1, 0, 4, 2)), ((5, 4), (2, 4), (0, -2)),
                    ((4, 3), (2, 3), (0, 1, 3), True)),
           errors=_e(((Z((3, 4)), Z((3, 3)), 1), RuntimeError, "src size = [3, 3], slice size = [3, 4]"),
                     ((Z((3, 4)), Z((3, 2)), 1, 0, 4, 0), RuntimeError, "slice step must be positive"))),
    OpInfo("Tensor.slice_scatter", lambda T, a, b: a.slice_scatter(b, start=1), _scatter(((3, 4), (2, 4), ()))),
    OpInfo("as_strided_scatter", _fn("as_strided_scatter"),
           _plus(_scatter(((3, 4), (2, 2), ((2, 2), (1, 2))), ((3, 4), (2, 3), ((2, 3), (4, 1), 1)),
                          ((3, 4), (3,), ((3,), (5,)))),
                 lambda rng, dt: [Sample(NoGrad(noncontig(arr(rng, (4, 3), dt))), arr(rng, (2, 2), dt), (2, 2),
                                         (3, 1), name="nc")]),
           errors=_e(((Z((3, 4)), Z((2, 3)), (2, 2), (1, 2)), RuntimeError, "src size = [2, 3], slice size = [2, 2]"),
                     ((Z((3, 4)), Z((2, 2)), (2, 2), (1, 20)), RuntimeError, "out of bounds for storage"))),
    OpInfo("as_strided_scatter_noncontig_grad",
           lambda T, a, b: T.as_strided_scatter(a.t().requires_grad_(), b, (2, 2), (3, 1)), lambda rng, dt: [],
           errors=_e(((Z((3, 4)), Z((2, 2))), RuntimeError,
                      "as_strided_scatter is currently only supported for contiguous inputs"))),
    OpInfo("Tensor.as_strided_scatter", lambda T, a, b: a.as_strided_scatter(b, (2,), (3,)), _scatter(((3, 4), (2,), ()))),
    OpInfo("slice_inverse", lambda T, a, b: T.slice_inverse((a * 1)[:, 1::2], b, 1, 1, None, 2),
           _scatter(((3, 4), (3, 4), ())), gradgrad=False),
    OpInfo("fill_number", lambda T, a: T.fill(a, 2.5), _many(((3, 4), ()), ((), ()), ((4, 3), (), True))),
    OpInfo("fill_tensor", lambda T, a, v: T.fill(a, v), _scatter(((3, 4), (), ()), ((0, 2), (), ())),
           errors=_e(((Z((3, 4)), Z((2,))), RuntimeError, "fill_ only supports 0-dimension value tensor"))),
]
