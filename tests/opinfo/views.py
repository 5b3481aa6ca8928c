"""Op table rows: view ops (ops/views.py) -- values, grad_fn names and gradients against torch."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, noncontig


def _e(*items):
    return lambda: [ErrorSample(Sample(*args), err, msg) for args, err, msg in items]


Z = np.zeros


def _one(shape, *extra, nc=False):
    def gen(rng, dt):
        a = arr(rng, shape, dt)
        return [Sample(noncontig(a) if nc else a, *extra)]
    return gen


def _many(*specs):
    """specs: (shape, extra args tuple[, nc])"""
    def gen(rng, dt):
        out = []
        for sp in specs:
            shape, extra = sp[0], sp[1]
            a = arr(rng, shape, dt)
            if len(sp) > 2 and sp[2]:
                a = noncontig(a)
            out.append(Sample(a, *extra, name=f"{shape}{extra}"))
        return out
    return gen


def _gi(key):
    return lambda T, a: a[key]


E = Ellipsis

OPS = [
    OpInfo("view", lambda T, a, *s: a.view(*s),
           _many(((3, 4), (12,)), ((3, 4), (2, -1)), ((), (1, 1)), ((0, 3), (3, 0)), ((2, 3, 4), ((6, 4),))),
           errors=_e(((Z((3, 4)), 5), RuntimeError, "shape '[5]' is invalid for input of size 12"))),
    OpInfo("view_noncontig_error", lambda T, a: a.t().view(12), lambda rng, dt: [],
           errors=_e(((Z((3, 4)),), RuntimeError, "view size is not compatible with input tensor's size and stride"))),
    OpInfo("reshape", lambda T, a, *s: a.reshape(*s),
           _many(((3, 4), (12,)), ((3, 4), (4, 3)), ((4, 3), (-1,), True), ((), (1,)), ((0, 3), (0, 1, 3)))),
    OpInfo("reshape_fn", lambda T, a, s: T.reshape(a, s), _many(((3, 4), ((2, 6),)), ((4, 3), ((3, 4),), True))),
    OpInfo("view_as", lambda T, a, b: a.view_as(b),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (2, 6), dt))]),
    OpInfo("flatten", lambda T, a, *d: T.flatten(a, *d),
           _many(((2, 3, 4), ()), ((2, 3, 4), (1,)), ((2, 3, 4), (0, 1)), ((), ()), ((4, 3), (), True))),
    OpInfo("unflatten", lambda T, a, d, s: a.unflatten(d, s),
           _many(((6, 4), (0, (2, 3))), ((3, 8), (-1, (2, -1))), ((3, 4), (1, (4,))))),
    OpInfo("permute", lambda T, a, *p: a.permute(*p),
           _many(((2, 3, 4), (2, 0, 1)), ((2, 3, 4), ((1, -1, 0),)), ((), ((),)), ((4, 3), (1, 0), True)),
           errors=_e(((Z((2, 3)), 0, 0), RuntimeError, "duplicate dims are not allowed"))),
    OpInfo("movedim", lambda T, a, s, d: T.movedim(a, s, d),
           _many(((2, 3, 4), (0, 2)), ((2, 3, 4), ((0, 1), (2, 0))), ((2, 3, 4), (-1, 0)))),
    OpInfo("transpose", lambda T, a, d0, d1: a.transpose(d0, d1),
           _many(((3, 4), (0, 1)), ((2, 3, 4), (-1, 0)), ((4, 3), (0, 1), True)),
           errors=_e(((Z((3, 4)), 0, 2), IndexError, "Dimension out of range"))),
    OpInfo("t", lambda T, a: a.t(), _many(((3, 4), ()), ((3,), ()), ((), ()), ((4, 3), (), True)),
           errors=_e(((Z((2, 3, 4)),), RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is 3D"))),
    OpInfo("T_2d", lambda T, a: a.T, _many(((3, 4), ()), ((4, 3), (), True))),
    OpInfo("mT", lambda T, a: a.mT, _many(((3, 4), ()), ((2, 3, 4), ()))),
    OpInfo("Tensor.adjoint", lambda T, a: a.adjoint(), _many(((3, 4), ()), ((2, 3, 4), ()))),
    OpInfo("expand", lambda T, a, *s: a.expand(*s),
           _many(((3, 1), (3, 4)), ((4,), (2, 3, 4)), ((), (2, 3)), ((3, 1), (-1, 5)), ((1, 3), ((2, 2, 3),))),
           errors=_e(((Z((3, 2)), 3, 4), RuntimeError, "The expanded size of the tensor (4) must match the existing size (2)"),
                     ((Z((1, 3)), -2, 3), RuntimeError, "numel: integer multiplication overflow"))),
    OpInfo("expand_as", lambda T, a, b: a.expand_as(b), lambda rng, dt: [Sample(arr(rng, (3, 1), dt), arr(rng, (2, 3, 4), dt))]),
    OpInfo("broadcast_to", lambda T, a, s: T.broadcast_to(a, s), _many(((3, 1), ((3, 4),)), ((), ((2,),)))),
    OpInfo("squeeze_all", lambda T, a: a.squeeze(), _many(((3, 1, 4, 1), ()), ((1,), ()), ((), ()), ((3, 4), ()))),
    OpInfo("squeeze_dim", lambda T, a, d: a.squeeze(d), _many(((3, 1, 4), (1,)), ((3, 1, 4), (0,)), ((1, 4), (-2,)), ((), (0,)))),
    OpInfo("squeeze_dims", lambda T, a, d: T.squeeze(a, d), _many(((1, 3, 1, 4), ((0, 2),)), ((1, 3, 1), ((0, 1),)))),
    OpInfo("unsqueeze", lambda T, a, d: a.unsqueeze(d), _many(((3, 4), (0,)), ((3, 4), (-1,)), ((3, 4), (1,)), ((), (0,))),
           errors=_e(((Z((3, 4)), 3), IndexError, "Dimension out of range"))),
    OpInfo("narrow", lambda T, a, d, s, n: a.narrow(d, s, n),
           _many(((5, 4), (0, 1, 3)), ((5, 4), (1, -3, 2)), ((4, 3), (1, 0, 0), True)),
           errors=_e(((Z((5, 4)), 0, 3, 3), RuntimeError, "start (3) + length (3) exceeds dimension size (5)."),
                     ((Z((5, 4)), 0, -7, 2), IndexError, "expected to be in range of [-5, 5], but got -7)"),
                     ((Z((5, 4)), 0, 2, -1), RuntimeError, "narrow(): length must be non-negative."))),
    OpInfo("select", lambda T, a, d, i: a.select(d, i), _many(((3, 4), (0, 1)), ((3, 4), (1, -1)), ((2, 3, 4), (2, 0))),
           errors=_e(((Z((3, 4)), 0, 5), IndexError, "index 5 out of range for tensor of size [3, 4] at dimension 0"))),
    OpInfo("unfold", lambda T, a, d, s, st: a.unfold(d, s, st),
           _many(((7,), (0, 3, 2)), ((4, 6), (1, 2, 2)), ((4, 6), (0, 2, 1)), ((), (0, 1, 1)))),
    OpInfo("as_strided", lambda T, a, s, st, o=None: T.as_strided(a, s, st, o),
           _many(((3, 4), ((2, 2), (4, 1))), ((3, 4), ((3,), (5,))), ((3, 4), ((2, 3), (1, 2), 1)),
                 ((3, 4), ((0,), (1,), 12)), ((3, 4), ((2, 2), (4, 1)), True), ((3, 4), ((12,), (1,)))),
           # every view must stay inside its storage: torch's checks and texts
           errors=_e(((Z((4,)), (3,), (2,)), RuntimeError, "requiring a storage size of 40 are out of bounds for "
                                                             "storage of size 32"),
                     ((Z((4,)), (64,), (1,), 4), RuntimeError, "requiring a storage size of 544 are out of bounds"),
                     ((Z((4,)), (2,), (2 ** 40,)), RuntimeError, "out of bounds for storage of size 32"),
                     ((Z((4,)), (2,), (2 ** 62,)), RuntimeError, "Storage size calculation overflowed"),
                     ((Z((4,)), (-1,), (1,)), RuntimeError, "Storage size calculation overflowed"),
                     ((Z((4,)), (2,), (-1,)), RuntimeError, "Negative strides are not supported"),
                     ((Z((4,)), (2,), (1,), -1), RuntimeError, "invalid storage offset -1"),
                     ((Z((4,)), (2, 2), (1,)), RuntimeError, "mismatch in length of strides and shape"),
                     ((Z((4,)), (2.0,), (1,)), TypeError, "must be tuple of ints"),
                     ((Z((4,)), (2,), (1,), 1.5), TypeError, "must be int, not float"))),
    # a view's storage is its base's: the default offset is the view's own, the bound the whole storage
    OpInfo("as_strided_of_view", lambda T, a, *args: a[1:].as_strided(*args),
           _many(((3, 4), ((2, 3), (3, 1))), ((3, 4), ((2, 3), (3, 1), 5)), ((3, 4), ((3,), (2,), 5)),
                 ((3, 4), ((2, 2), (1, 4)))),
           errors=_e(((Z((3, 4)), (9,), (1,)), RuntimeError, "out of bounds for storage of size 96"))),
    OpInfo("as_strided_of_transpose", lambda T, a: a.t().as_strided((2, 2), (1, 4), 1), _many(((3, 4), ()))),
    OpInfo("as_strided_of_expand", lambda T, a: a[:1].expand(3, 4).as_strided((2, 2), (1, 1)), _many(((3, 4), ()))),
    OpInfo("as_strided_overlap", lambda T, a: a.as_strided((3, 3), (1, 1)), _many(((3, 4), ()))),
    OpInfo("diagonal", lambda T, a, *args: T.diagonal(a, *args),
           _many(((3, 4), ()), ((3, 4), (1,)), ((4, 3), (-2,)), ((2, 3, 4), (0, 0, 2)), ((2, 3, 4), (1, -1, 1)),
                 ((4, 3), (), True)),
           errors=_e(((Z((3, 4)), 0, 0, 0), RuntimeError, "diagonal dimensions cannot be identical 0, 0"))),
    OpInfo("split_int", lambda T, a, s, d=0: T.split(a, s, d), _many(((5, 4), (2,)), ((5, 4), (3, 1)))),
    OpInfo("split_single_output", lambda T, a, s: a.split(s), _many(((5, 4), (5,)))),
    OpInfo("split_sizes", lambda T, a, s, d=0: a.split(s, d), _many(((5, 4), ([2, 3],)), ((5, 4), ((1, 0, 3), 1)))),
    OpInfo("chunk", lambda T, a, c, d=0: a.chunk(c, d), _many(((5, 4), (2,)), ((5, 4), (3, 1)), ((6,), (3,)))),
    OpInfo("unbind", lambda T, a, d=0: T.unbind(a, d), _many(((3, 4), ()), ((3, 4), (1,)), ((2, 3, 4), (-1,)))),
    OpInfo("tensor_split", lambda T, a, s, d=0: T.tensor_split(a, s, d),
           _many(((7, 4), (3,)), ((7, 4), ([1, 5],)), ((7, 4), ((2,), 1)), ((4, 3), (2, 1), True))),
    OpInfo("slice_step", _gi((slice(None, None, 2), slice(1, None, 2))), _many(((5, 4), ()), ((4, 3), (), True))),
    OpInfo("slice_negative", _gi((slice(-3, -1), -1)), _many(((5, 4), ()))),
    OpInfo("slice_none_ellipsis", _gi((None, E, 1, None)), _many(((2, 3, 4), ()))),
    OpInfo("slice_ellipsis_only", _gi(E), _many(((2, 3), ()))),
    OpInfo("slice_full_single", _gi(slice(None)), _many(((3, 4), ()), ((4, 3), (), True))),
    OpInfo("slice_full_tuple", _gi((slice(None), slice(0, 4))), _many(((3, 4), ()))),
    OpInfo("slice_none_only", _gi((slice(None), None)), _many(((3, 4), ()))),
    OpInfo("slice_int", _gi(-2), _many(((5, 4), ()))),
    OpInfo("slice_int_to_0d", _gi(-2), _many(((3,), ()))),
    OpInfo("slice_ints_to_0d", _gi((1, -1)), _many(((3, 4), ()))),
    OpInfo("select_to_0d", lambda T, a: a.select(0, -2), _many(((3,), ()))),
    # transpose(0, -1) of a 0-d tensor: views.transpose raises NumPy's AxisError (torch returns the
    # tensor); no row, since the values test cannot be marked as an expected failure.
    OpInfo("slice_empty", _gi((slice(3, 1), slice(None))), _many(((5, 4), ()))),
    OpInfo("slice_out_of_range", _gi(slice(2, 100)), _many(((5, 4), ()))),
    OpInfo("slice_errors", lambda T, a, i: a[i], lambda rng, dt: [],
           errors=_e(((Z((3, 4)), 3), IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
                     ((Z((3, 4)), (0, 0, 0)), IndexError, "too many indices for tensor of dimension 2"),
                     ((Z((3, 4)), slice(None, None, -1)), ValueError, "step must be greater than zero"))),
]
