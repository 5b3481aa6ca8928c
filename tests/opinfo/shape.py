"""Op table rows: shape ops that copy (ops/shape.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, noncontig, Idx


def _s(*shapes_and_kw):
    def gen(rng, dt):
        out = []
        for item in shapes_and_kw:
            shape, kw = item if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict) else (item, {})
            a = arr(rng, shape, dt)
            if kw.pop("nc", False):
                a = noncontig(a)
            out.append(Sample(a, name=f"{shape}{kw}", **kw))
        return out
    return gen




def _e(*pairs):
    return lambda: [ErrorSample(Sample(*args, **kw), err, msg) for args, kw, err, msg in pairs]


Z = np.zeros


OPS = [
    OpInfo("cat", lambda T, a, b: T.cat([a, b], 1),
           lambda rng, dt: [Sample(arr(rng, (3, 2), dt), arr(rng, (3, 4), dt)),
                            Sample(arr(rng, (0, 2), dt), arr(rng, (0, 1), dt))]),
    OpInfo("stack", lambda T, a, b: T.stack([a, b], -1),
           lambda rng, dt: [Sample(arr(rng, (3, 2), dt), arr(rng, (3, 2), dt)), Sample(arr(rng, (), dt), arr(rng, (), dt))]),
    OpInfo("flip", lambda T, a, dims: T.flip(a, dims),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), (0,)), Sample(arr(rng, (2, 3, 4), dt), (0, 2)),
                            Sample(noncontig(arr(rng, (4, 3), dt)), (-1,)), Sample(arr(rng, (), dt), ()),
                            Sample(arr(rng, (0, 3), dt), (1,))],
           errors=_e(((Z((3, 4)), (0, 0)), {}, RuntimeError, "appears multiple times"),
                     ((Z((3, 4)), (2,)), {}, IndexError, "Dimension out of range"))),
    OpInfo("fliplr", lambda T, a: T.fliplr(a), _s((3, 4), (2, 3, 4)),
           errors=_e(((Z(3),), {}, RuntimeError, "Input must be >= 2-d."))),
    OpInfo("flipud", lambda T, a: a.flipud(), _s((3, 4), (5,))),
    OpInfo("roll", lambda T, a, s, d: T.roll(a, s, d),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 1, 0), Sample(arr(rng, (3, 4), dt), (1, -2), (0, 1)),
                            Sample(arr(rng, (3, 4), dt), 5, None), Sample(noncontig(arr(rng, (4, 3), dt)), -1, 1),
                            Sample(arr(rng, (0, 3), dt), 1, 1)],
           errors=_e(((Z((3, 4)), 1, (0, 1)), {}, RuntimeError, "shifts and dimensions must align"))),
    OpInfo("repeat", lambda T, a, *r: a.repeat(*r),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 2, 1), Sample(arr(rng, (3,), dt), 2, 1, 3),
                            Sample(arr(rng, (), dt), 3), Sample(noncontig(arr(rng, (4, 3), dt)), 1, 2),
                            Sample(arr(rng, (2, 0), dt), 2, 2)],
           errors=_e(((Z((3, 4)), 2), {}, RuntimeError, "can not be smaller than"))),
    OpInfo("tile", lambda T, a, r: T.tile(a, r),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), (2,)), Sample(arr(rng, (3,), dt), (2, 2)),
                            Sample(arr(rng, (2, 3), dt), (2, 1, 1)), Sample(arr(rng, (), dt), (3,))]),
    OpInfo("repeat_interleave_int", lambda T, a, r, d=None: T.repeat_interleave(a, r, dim=d),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 2), Sample(arr(rng, (3, 4), dt), 2, d=0),
                            Sample(arr(rng, (3, 4), dt), 3, d=-1), Sample(arr(rng, (), dt), 2),
                            Sample(noncontig(arr(rng, (4, 3), dt)), 2, d=1)],
           errors=_e(((Z((3, 4)), -1), {}, RuntimeError, "Repeats must be non-negative"))),
    OpInfo("repeat_interleave_tensor", lambda T, a, r, d: a.repeat_interleave(r, d),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([1, 2, 0]), 0),
                            Sample(arr(rng, (3, 4), dt), Idx([2, 0, 1, 1]), 1)],
           errors=_e(((Z((3, 4)), Idx([1, 2]), 0), {}, RuntimeError, "repeats must have the same size"))),
    OpInfo("repeat_interleave_repeats", lambda T, r: T.repeat_interleave(r),
           lambda rng, dt: [Sample(Idx([1, 0, 3]))], dtypes=("float64",), differentiable=False),
    OpInfo("tril", lambda T, a, k=0: T.tril(a, k),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt)), Sample(arr(rng, (4, 3), dt), 1),
                            Sample(arr(rng, (2, 3, 3), dt), -1), Sample(noncontig(arr(rng, (4, 3), dt))),
                            Sample(arr(rng, (0, 3), dt))],
           errors=_e(((Z(3),), {}, RuntimeError, "tril: input tensor must have at least 2 dimensions"))),
    OpInfo("triu", lambda T, a, k=0: a.triu(k),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt)), Sample(arr(rng, (4, 3), dt), -1),
                            Sample(arr(rng, (2, 3, 3), dt), 2), Sample(noncontig(arr(rng, (4, 3), dt)))]),
    OpInfo("tril_", lambda T, a, k=0: (a * 1).tril_(k),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt)), Sample(arr(rng, (4, 3), dt), 1)]),
    OpInfo("triu_", lambda T, a, k=0: (a * 1).triu_(k),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt)), Sample(arr(rng, (2, 4, 3), dt), -1)]),
    OpInfo("diag", lambda T, a, k=0: T.diag(a, k),
           lambda rng, dt: [Sample(arr(rng, (3,), dt)), Sample(arr(rng, (3,), dt), 1), Sample(arr(rng, (3,), dt), -2),
                            Sample(arr(rng, (3, 4), dt)), Sample(arr(rng, (4, 3), dt), -1),
                            Sample(noncontig(arr(rng, (4, 3), dt)), 1), Sample(arr(rng, (0,), dt))],
           errors=_e(((Z((2, 2, 2)),), {}, RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D"))),
    OpInfo("diag_embed", lambda T, a, *args: T.diag_embed(a, *args),
           lambda rng, dt: [Sample(arr(rng, (3,), dt)), Sample(arr(rng, (2, 3), dt)), Sample(arr(rng, (2, 3), dt), 1),
                            Sample(arr(rng, (2, 3), dt), -1, 0, 2), Sample(noncontig(arr(rng, (4, 3), dt)), 0, 2, 0)],
           errors=_e(((Z((3, 4)), 0, 0, 0), {}, RuntimeError, "diagonal dimensions cannot be identical"))),
    OpInfo("diagflat", lambda T, a, *args: T.diagflat(a, *args),
           lambda rng, dt: [Sample(arr(rng, (3,), dt)), Sample(arr(rng, (2, 2), dt), 1), Sample(arr(rng, (2, 3), dt), -2),
                            Sample(noncontig(arr(rng, (4, 3), dt))), Sample(arr(rng, (), dt))]),
    OpInfo("Tensor.diagflat", lambda T, a: a.diagflat(1), lambda rng, dt: [Sample(arr(rng, (3,), dt))]),
    OpInfo("rot90", lambda T, a, *args: T.rot90(a, *args),
           lambda rng, dt: [Sample(arr(rng, (2, 3), dt)), Sample(arr(rng, (2, 3), dt), 2), Sample(arr(rng, (2, 3), dt), -1),
                            Sample(arr(rng, (2, 3, 4), dt), 3, [2, 0]), Sample(arr(rng, (2, 3), dt), 4),
                            Sample(noncontig(arr(rng, (4, 3), dt)), 5, (1, 0))],
           errors=_e(((Z((3, 4)), 1, [0]), {}, RuntimeError, "expected total rotation dims == 2"),
                     ((Z((3, 4)), 1, [0, 0]), {}, RuntimeError, "expected rotation dims to be different"),
                     ((Z(3),), {}, RuntimeError, "expected total dims >= 2"))),
    OpInfo("Tensor.rot90", lambda T, a: a.rot90(1, [1, 0]), lambda rng, dt: [Sample(arr(rng, (2, 3), dt))]),
    OpInfo("diff", lambda T, a, *args, **kw: T.diff(a, *args, **kw),
           lambda rng, dt: [Sample(arr(rng, (5,), dt)), Sample(arr(rng, (4, 3), dt), 2, 0), Sample(arr(rng, (4, 3), dt), 0),
                            Sample(arr(rng, (4, 3), dt), 6, 0), Sample(noncontig(arr(rng, (4, 3), dt)), 1, -2),
                            Sample(arr(rng, (4, 3), dt), 1, 0, arr(rng, (2, 3), dt), arr(rng, (1, 3), dt)),
                            Sample(arr(rng, (4, 3), dt), 2, append=arr(rng, (4, 2), dt))],
           errors=_e(((Z(()),), {}, RuntimeError, "diff expects input to be at least one-dimensional"),
                     ((Z(3), -1), {}, RuntimeError, "order must be non-negative"),
                     ((Z((4, 3)), 1, 0, Z((1, 2))), {}, RuntimeError, "input.size(1) = 3, but got tensor.size(1) = 2"))),
    OpInfo("diff_int", lambda T, a: (T.diff(a), a.diff(), T.diff(a > 0)),
           lambda rng, dt: [Sample(np.array([3, -1, 4, 0, 5]))], differentiable=False, dtypes=("float64",)),
    OpInfo("trace", lambda T, a: T.trace(a), _s((3, 4), (4, 3), (3, 3), ((3, 3), {"nc": True}), (0, 2)),
           errors=_e(((Z(3),), {}, RuntimeError, "trace: expected a matrix, but got tensor with dim 1"))),
    OpInfo("meshgrid_ij", lambda T, a, b: T.meshgrid(a, b, indexing="ij"),
           lambda rng, dt: [Sample(arr(rng, (3,), dt), arr(rng, (4,), dt)), Sample(arr(rng, (), dt), arr(rng, (2,), dt))],
           ),
    OpInfo("meshgrid_xy", lambda T, a, b, c: T.meshgrid([a, b, c], indexing="xy"),
           lambda rng, dt: [Sample(arr(rng, (3,), dt), arr(rng, (4,), dt), arr(rng, (2,), dt))]),
    OpInfo("meshgrid_bad", lambda T, a, b: T.meshgrid(a, b, indexing="zz"), lambda rng, dt: [],
           errors=_e(((Z(3), Z(2)), {}, RuntimeError, "indexing must be one of"))),
    OpInfo("hstack", lambda T, a, b: T.hstack([a, b]),
           lambda rng, dt: [Sample(arr(rng, (3,), dt), arr(rng, (2,), dt)), Sample(arr(rng, (3, 2), dt), arr(rng, (3, 1), dt)),
                            Sample(arr(rng, (), dt), arr(rng, (2,), dt))],
           ),
    OpInfo("vstack", lambda T, a, b: T.vstack((a, b)),
           lambda rng, dt: [Sample(arr(rng, (3,), dt), arr(rng, (3,), dt)), Sample(arr(rng, (1, 2), dt), arr(rng, (3, 2), dt)),
                            Sample(arr(rng, (), dt), arr(rng, (), dt))]),
    OpInfo("dstack", lambda T, a, b: T.dstack([a, b]),
           lambda rng, dt: [Sample(arr(rng, (3,), dt), arr(rng, (3,), dt)), Sample(arr(rng, (2, 3), dt), arr(rng, (2, 3), dt)),
                            Sample(arr(rng, (2, 3, 1), dt), arr(rng, (2, 3, 2), dt))]),
    OpInfo("column_stack", lambda T, a, b: T.column_stack([a, b]),
           lambda rng, dt: [Sample(arr(rng, (3,), dt), arr(rng, (3,), dt)), Sample(arr(rng, (3, 2), dt), arr(rng, (3,), dt)),
                            Sample(arr(rng, (), dt), arr(rng, (), dt))]),
    OpInfo("atleast_1d", lambda T, a, b: (T.atleast_1d(a), T.atleast_1d(a, b)),
           lambda rng, dt: [Sample(arr(rng, (), dt), arr(rng, (2, 3), dt))]),
    OpInfo("atleast_2d", lambda T, a, b: (T.atleast_2d(a), T.atleast_2d([a, b])),
           lambda rng, dt: [Sample(arr(rng, (), dt), arr(rng, (3,), dt)), Sample(arr(rng, (3,), dt), arr(rng, (2, 3, 4), dt))]),
    OpInfo("atleast_3d", lambda T, a, b, c: T.atleast_3d(a, b, c),
           lambda rng, dt: [Sample(arr(rng, (), dt), arr(rng, (3,), dt), arr(rng, (2, 3), dt))]),
    OpInfo("broadcast_tensors", lambda T, a, b: T.broadcast_tensors(a, b),
           lambda rng, dt: [Sample(arr(rng, (3, 1), dt), arr(rng, (4,), dt)), Sample(arr(rng, (), dt), arr(rng, (2, 3), dt)),
                            Sample(arr(rng, (2, 3), dt), arr(rng, (2, 3), dt))],
           errors=_e(((Z((3, 4)), Z(3)), {}, RuntimeError, "must match the size of tensor b"))),
]
