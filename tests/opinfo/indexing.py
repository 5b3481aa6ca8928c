"""Op table rows: indexing, gather/scatter, index_*, masked_*, take/put, index_put (ops/indexing*.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, noncontig, Idx, NoGrad


def _e(*items):
    return lambda: [ErrorSample(Sample(*args), err, msg) for args, err, msg in items]


Z = np.zeros
I2 = Idx([[0, 1], [2, 0], [1, 1]])           # (3, 2) index into dim 1 of a (3, 4)
IP = Idx([[0, 3], [2, 1], [1, 0]])           # no repeats within a row (scatter targets)


def _getitem(key):
    def op(T, a, *idx):
        k = tuple(i if not isinstance(i, str) or i == "T" else {"E": Ellipsis, "N": None}[i] for i in key)
        it = iter(idx)
        k = tuple(next(it) if x == "T" else x for x in k)
        return a[k if len(k) != 1 else k[0]]
    return op


def _set(kind):
    def op(T, a, v, *idx):
        y = a.clone()
        if kind == "int":
            y[0] = v
        elif kind == "slice":
            y[1:, ::2] = v
        elif kind == "ellipsis":
            y[..., 1] = v
        elif kind == "scalar":
            y[0, 1:3] = 2.5
        elif kind == "mask":
            y[idx[0]] = 0
        elif kind == "mask_tensor_value":
            y[idx[0]] = v
        elif kind == "ints":
            y[1, 2] = v
        elif kind == "adv":
            y[idx[0]] = v
        elif kind == "adv_slice":
            y[1:, idx[0]] = v
        elif kind == "adv_full_slice":
            y[:, idx[0]] = v
        elif kind == "adv_none":
            y[None, idx[0]] = v
        return y * 1 if kind == "never" else y
    return op


def _ga(shape, *extra, nc=False):
    def gen(rng, dt):
        a = arr(rng, shape, dt)
        return [Sample(noncontig(a) if nc else a, *extra)]
    return gen


def _sr(reduce, include_self=True):
    def op(T, a, i, s, d=1):
        return T.scatter_reduce(a, d, i, s, reduce, include_self=include_self)

    def gen(rng, dt):
        lo = 0.5 if reduce == "prod" else -2.0
        a = arr(rng, (3, 4), dt, lo, 2.0)
        s = arr(rng, (3, 3), dt, lo, 2.0)
        return [Sample(a, Idx([[0, 0, 3], [2, 1, 2], [1, 1, 1]]), s),
                Sample(arr(rng, (5,), dt, lo, 2.0), Idx([0, 4, 0]), arr(rng, (3,), dt, lo, 2.0), 0)]
    return OpInfo(f"scatter_reduce_{reduce}{'' if include_self else '_noself'}", op, gen,
                  gradgrad=True)


M34 = np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 0, 0]], bool)

OPS = [
    # -- getitem --------------------------------------------------------------------------------
    OpInfo("getitem_int_list", _getitem(([0, 2, 2],)), _ga((3, 4))),
    OpInfo("getitem_int_tensor", _getitem(("T",)), _ga((3, 4), Idx([[0, 2], [1, 0]])),
           errors=_e(((Z((3, 4)), Idx([5])), IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
                     ((Z((3, 4)), NoGrad(np.array([0.]))), IndexError,
                      "tensors used as indices must be long, int, byte or bool tensors"))),
    OpInfo("getitem_repeat_accum", _getitem((slice(None), "T")), _ga((3, 4), Idx([1, 1, 3, 1]), nc=True)),
    OpInfo("getitem_bool_mask", _getitem(("T",)), _ga((3, 4), Idx(M34)),
           errors=_e(((Z((3, 4)), Idx([True, False])), IndexError, "The shape of the mask [2] at index 0 does not "
                      "match the shape of the indexed tensor [3, 4] at index 0"))),
    OpInfo("getitem_bool_row", _getitem(("T", slice(1, None))), _ga((3, 4), Idx([True, False, True]))),
    OpInfo("getitem_uint8_mask", _getitem(("T",)), _ga((3, 4), Idx(M34.astype(np.uint8)))),
    OpInfo("getitem_two_tensors", _getitem(("T", "T")), _ga((3, 4), Idx([0, 2, 2]), Idx([[1], [3]]))),
    OpInfo("getitem_none_slice_adv", _getitem(("N", "T", slice(1, None))), _ga((3, 4), Idx([0, 1]))),
    OpInfo("getitem_ellipsis_adv", _getitem(("E", "T")), _ga((2, 3, 4), Idx([3, 0]))),
    OpInfo("getitem_separated_adv", _getitem(("T", slice(None), "T")), _ga((2, 3, 4), Idx([1, 0]), Idx([3, 3]))),
    OpInfo("getitem_scalar_and_list", _getitem((1, [0, 3, 3])), _ga((3, 4))),
    OpInfo("getitem_out_of_bounds_int", _getitem((5,)), lambda rng, dt: [],
           errors=_e(((Z((3, 4)),), IndexError, "index 5 is out of bounds for dimension 0 with size 3"))),
    OpInfo("getitem_out_of_bounds_list", _getitem(([5],)), lambda rng, dt: [],
           errors=_e(((Z((3, 4)),), IndexError, "index 5 is out of bounds for dimension 0 with size 3"))),
    # -- setitem --------------------------------------------------------------------------------
    OpInfo("setitem_int", _set("int"), lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (4,), dt)),
                                                        Sample(arr(rng, (3, 4), dt), arr(rng, (), dt))]),
    OpInfo("setitem_slice_step", _set("slice"), lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (2, 2), dt))]),
    OpInfo("setitem_ellipsis", _set("ellipsis"), lambda rng, dt: [Sample(arr(rng, (2, 3, 4), dt), arr(rng, (3,), dt))]),
    OpInfo("setitem_scalar", _set("scalar"), lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 0.0)]),
    OpInfo("setitem_mask", _set("mask"), lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 0.0, Idx(M34))]),
    OpInfo("setitem_adv", _set("adv"), lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (2, 1), dt), Idx([2, 0])),
                                                        Sample(arr(rng, (3, 4), dt), arr(rng, (4,), dt), Idx([1]))]),
    OpInfo("setitem_adv_slice", _set("adv_slice"),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (2, 2), dt), Idx([3, 0]))]),
    OpInfo("setitem_adv_full_slice", _set("adv_full_slice"),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (3, 1), dt), Idx([3, 0]))]),
    OpInfo("setitem_adv_none", _set("adv_none"),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (4,), dt), Idx([2, 0]))]),
    OpInfo("setitem_mask_error", _set("mask"), lambda rng, dt: [],
           errors=_e(((Z((3, 4)), 0.0, Idx([True, False])), IndexError, "The shape of the mask [2] at index 0"),
                     ((Z((3, 4)), 0.0, Idx(M34.astype(np.uint8))), RuntimeError,
                      "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"))),
    OpInfo("setitem_mask_tensor_value", _set("mask_tensor_value"),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (), dt), Idx(M34)),
                            Sample(arr(rng, (3, 4), dt), arr(rng, (4,), dt), Idx([True, False, True]))]),
    OpInfo("setitem_ints_0d", _set("ints"), lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (), dt))]),
    OpInfo("getitem_legacy_sequence", lambda T, a: a[[[0, 2], slice(1, None)]], _ga((3, 4))),
    # -- gather / scatter -------------------------------------------------------------------------
    OpInfo("gather", lambda T, a, d, i: T.gather(a, d, i),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 1, I2), Sample(arr(rng, (3, 4), dt), 0, Idx([[2, 2, 0, 1]])),
                            Sample(noncontig(arr(rng, (4, 3), dt)), -1, Idx([[0], [2], [2], [1]])),
                            Sample(arr(rng, (), dt), 0, Idx(0)), Sample(arr(rng, (3, 4), dt), 1, Idx(np.zeros((0, 2), np.int64)))],
           errors=_e(((Z((3, 4)), 1, Idx([[5]])), RuntimeError, "index 5 is out of bounds for dimension 1 with size 4"))),
    OpInfo("scatter_src", lambda T, a, i, s: T.scatter(a, 1, i, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), IP, arr(rng, (3, 2), dt)),
                            Sample(noncontig(arr(rng, (4, 3), dt)), Idx([[2], [0], [1], [1]]), arr(rng, (4, 1), dt))]),
    OpInfo("scatter_value", lambda T, a, i: a.scatter(0, i, 1.5),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([[0, 2, 1, 1]])), Sample(arr(rng, (5,), dt), Idx([4, 4]))],
           errors=_e(((Z((3, 4)), Idx([[7]])), RuntimeError, "index 7 is out of bounds for dimension 0 with size 3"))),
    OpInfo("scatter_reduce_arg", lambda T, a, i, s: a.scatter(1, i, s, reduce="add"),
           lambda rng, dt: [Sample(NoGrad(arr(rng, (3, 4), dt)), I2, NoGrad(arr(rng, (3, 2), dt)))], differentiable=False),
    OpInfo("scatter_", lambda T, a, i, s: (a * 1).scatter_(1, i, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), IP, arr(rng, (3, 2), dt))]),
    OpInfo("scatter_add", lambda T, a, i, s, d=1: T.scatter_add(a, d, i, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), I2, arr(rng, (3, 2), dt)),
                            Sample(arr(rng, (5,), dt), Idx([0, 0, 4]), arr(rng, (3,), dt), 0)]),
    OpInfo("scatter_add_", lambda T, a, i, s: (a * 1).scatter_add_(1, i, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), I2, arr(rng, (3, 2), dt))]),
    _sr("sum"), _sr("sum", False), _sr("mean"), _sr("mean", False), _sr("amax"), _sr("amin", False),
    _sr("prod"), _sr("amax", False),
    OpInfo("scatter_reduce_bad", lambda T, a, i, s: a.scatter_reduce(1, i, s, "foo"), lambda rng, dt: [],
           errors=_e(((Z((3, 4)), I2, Z((3, 2))), RuntimeError, "reduce argument must be either sum, prod, mean"))),
    # -- index_* ----------------------------------------------------------------------------------
    OpInfo("index_select", lambda T, a, d, i: T.index_select(a, d, i),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 0, Idx([0, 0, 2])), Sample(arr(rng, (3, 4), dt), 1, Idx([3, 1])),
                            Sample(noncontig(arr(rng, (4, 3), dt)), -1, Idx([2])), Sample(arr(rng, (3,), dt), 0, Idx(np.zeros(0, np.int64)))],
           errors=_e(((Z((3, 4)), 0, Idx([7])), IndexError, "index out of range in self"))),
    OpInfo("index_add", lambda T, a, i, s: T.index_add(a, 0, i, s, alpha=2),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([0, 0]), arr(rng, (2, 4), dt)),
                            Sample(arr(rng, (5,), dt), Idx([4, 1, 4]), arr(rng, (3,), dt))],
           errors=_e(((Z((3, 4)), Idx([0, 0]), Z((1, 4))), RuntimeError, "index_add_(): Number of indices (2)"))),
    OpInfo("index_add_", lambda T, a, i, s: (a * 1).index_add_(1, i, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([3, 3]), arr(rng, (3, 2), dt))]),
    OpInfo("index_copy", lambda T, a, i, s: a.index_copy(0, i, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([2, 0]), arr(rng, (2, 4), dt))],
           errors=_e(((Z((3, 4)), Idx([0, 1]), Z((1, 4))), IndexError, "index_copy_(): Number of indices (2)"))),
    OpInfo("index_copy_", lambda T, a, i, s: (a * 1).index_copy_(1, i, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([3, 1]), arr(rng, (3, 2), dt))]),
    OpInfo("index_fill", lambda T, a, i: a.index_fill(1, i, -1.0),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([0, 2])), Sample(noncontig(arr(rng, (4, 3), dt)), Idx([1]))],
           errors=_e(((Z((3, 4)), NoGrad(np.array([0.]))), IndexError, "Expected dtype int64 for index"))),
    OpInfo("index_fill_tensor", lambda T, a, i, v: T.index_fill(a, 0, i, v),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([0, 2]), arr(rng, (), dt))]),
    OpInfo("index_fill_", lambda T, a, i: (a * 1).index_fill_(0, i, 3.0),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([1]))]),
    # -- masked ops -------------------------------------------------------------------------------
    OpInfo("masked_fill", lambda T, a, m: T.masked_fill(a, m, 0.5),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx(M34)), Sample(arr(rng, (3, 4), dt), Idx([True, False, False, True])),
                            Sample(arr(rng, (), dt), Idx(True)), Sample(noncontig(arr(rng, (4, 3), dt)), Idx(M34.T.copy()))],
           errors=_e(((Z((3, 4)), Idx(np.ones(2, bool))), RuntimeError, "must match the size of tensor b"),
                     ((Z((3, 4)), NoGrad(Z((3, 4)))), RuntimeError, "masked_fill_ only supports boolean masks"))),
    OpInfo("masked_fill_tensor", lambda T, a, m, v: a.masked_fill(m, v),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx(M34), arr(rng, (), dt))]),
    OpInfo("masked_fill_", lambda T, a, m: (a * 1).masked_fill_(m, -2.0),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx(M34))]),
    OpInfo("masked_select", lambda T, a, m: T.masked_select(a, m),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx(M34)), Sample(arr(rng, (4,), dt), Idx(M34)),
                            Sample(arr(rng, (3, 1), dt), Idx([True, False, True, True])), Sample(arr(rng, (), dt), Idx(True))],
           errors=_e(((Z((3, 4)), NoGrad(Z((3, 4)))), RuntimeError, "masked_select: expected BoolTensor for mask"))),
    OpInfo("masked_scatter", lambda T, a, m, s: a.masked_scatter(m, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx(M34), arr(rng, (2, 5), dt)),
                            Sample(arr(rng, (3, 4), dt), Idx([False, True, True, False]), arr(rng, (6,), dt))]),
    OpInfo("masked_scatter_", lambda T, a, m, s: (a * 1).masked_scatter_(m, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx(M34), arr(rng, (6,), dt))]),
    # -- take / put / index_put ---------------------------------------------------------------------
    OpInfo("take", lambda T, a, i: T.take(a, i),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([[0, 5], [11, 5]])), Sample(noncontig(arr(rng, (4, 3), dt)), Idx([-1, 2])),
                            Sample(arr(rng, (), dt), Idx([0, 0]))],
           errors=_e(((Z((3, 4)), Idx([12])), IndexError, "out of range: tried to access index 12 on a tensor of 12 elements."))),
    OpInfo("take_along_dim", lambda T, a, i, d=None: T.take_along_dim(a, i, d),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([[0], [3], [1]]), 1), Sample(arr(rng, (3, 4), dt), Idx([0, 11, 11])),
                            Sample(arr(rng, (3, 4), dt), Idx([[2, 0, 0, 1]]), 0), Sample(arr(rng, (3, 1), dt), Idx([[0, 0]]), 1)]),
    OpInfo("put", lambda T, a, i, s: (a * 1).put_(i, s),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([0, 5, -1]), arr(rng, (3,), dt))]),
    OpInfo("Tensor.put", lambda T, a, i, s: (a.put(i, s), a.put(i, s, accumulate=True)),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([0, 5, -1]), arr(rng, (3,), dt))]),
    OpInfo("put_accumulate", lambda T, a, i, s: (a * 1).put_(i, s, accumulate=True),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([[0, 5], [5, 5]]), arr(rng, (2, 2), dt))]),
    OpInfo("index_put", lambda T, a, i, j, v: T.index_put(a, (i, j), v),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([0, 2]), Idx([1, 3]), arr(rng, (2,), dt)),
                            Sample(arr(rng, (3, 4), dt), Idx([[0], [2]]), Idx([1, 3]), arr(rng, (), dt))]),
    OpInfo("index_put_accumulate", lambda T, a, i, v: a.index_put((i,), v, accumulate=True),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([0, 0, 2]), arr(rng, (3, 4), dt)),
                            Sample(arr(rng, (3, 4), dt), Idx(M34), arr(rng, (6,), dt))]),
    OpInfo("index_put_", lambda T, a, i, v: (a * 1).index_put_((i,), v),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx([2, 1]), arr(rng, (4,), dt))]),
    OpInfo("nonzero", lambda T, a: (T.nonzero(a), a.nonzero(as_tuple=True)),
           lambda rng, dt: [Sample(NoGrad(np.array([[0, 1.5, 0], [2, 0, 3]], dt))), Sample(NoGrad(np.array(1., dt))),
                            Sample(NoGrad(np.zeros((0, 2), dt)))], differentiable=False),
    OpInfo("where_method", lambda T, a, m, b: a.where(m, b),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), Idx(M34), arr(rng, (4,), dt)), Sample(arr(rng, (3, 4), dt), Idx(M34), 2.0)]),
]
