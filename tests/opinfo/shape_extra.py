"""Op table rows: ops/shape_extra.py (splits, block_diag, cartesian_prod, combinations, tri indices, vander,
trapezoid) and ops/search.py (argwhere, unravel_index, searchsorted, bucketize, isin)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, Idx, NoGrad, TList, arr, noncontig

ND = dict(differentiable=False)


def _A(rng, dt):
    return lambda s: arr(rng, s, dt)


def _hsplit_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(A((4, 6)), 3, name="sections"), Sample(A((4, 6)), [1, 4], name="indices"),
            Sample(A((6,)), 2, name="1d"), Sample(noncontig(A((4, 6))), (2,), name="noncontig"),
            Sample(A((2, 4, 6)), [0, 7], name="3d_indices")]


def _vsplit_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(A((4, 6)), 2, name="sections"), Sample(A((4, 6)), [1, 3], name="indices"),
            Sample(A((6, 2, 3)), 3, name="3d")]


def _dsplit_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(A((2, 3, 6)), 3, name="sections"), Sample(A((2, 3, 6)), [2, 5], name="indices")]


def _dir_errors(name, shape, ok_dims):
    low = np.zeros((4,) * (ok_dims - 1)) if ok_dims > 1 else np.zeros(())
    return lambda: [ErrorSample(Sample(np.zeros(shape), 4), RuntimeError, f"torch.{name} attempted to split along"),
                    ErrorSample(Sample(low, 2), RuntimeError, f"torch.{name} requires a tensor with at least")]


def _sws_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(A((4, 6)), [2, 4], 1, name="dim1"), Sample(A((5, 3)), [1, 0, 4], name="with_zero"),
            Sample(noncontig(A((4, 6))), (3, 1), name="noncontig")]


def _sws_errors():
    return [ErrorSample(Sample(np.zeros((4, 6)), [2, 3], 1), RuntimeError, "expects split_sizes to sum exactly to 6"),
            ErrorSample(Sample(np.zeros((4, 6)), [-1, 7], 1), RuntimeError,
                        "expects split_sizes have only non-negative entries")]


def _usplit_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(A((4, 6)), 4, 1, name="dim1"), Sample(A((5, 3)), 2, name="dim0"),
            Sample(noncontig(A((4, 6))), 3, name="noncontig")]


def _bd_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(TList(A((2, 3)), A(()), A((3,)), A((1, 2))), name="mixed"), Sample(TList(A((2, 2))), name="one"),
            Sample(TList(A((0, 2)), A((2, 0)), A((2, 2))), name="empty_parts")]


def _cp_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(TList(A((3,)), A((2,))), name="two"), Sample(TList(A((2,)), A((2,)), A((3,))), name="three"),
            Sample(TList(A((4,))), name="one"), Sample(TList(A((0,)), A((2,))), name="empty")]


def _comb_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(A((4,)), name="default"), Sample(A((4,)), 3, name="r3"), Sample(A((3,)), 2, True, name="repl"),
            Sample(A((3,)), 1, name="r1"), Sample(A((3,)), 0, name="r0"), Sample(A((2,)), 4, name="r_big")]


def _vander_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(A((4,)), name="default"), Sample(A((3,)), 5, name="N5"), Sample(A((3,)), 4, True, name="increasing"),
            Sample(A((3,)), 1, name="N1"), Sample(A((3,)), 0, name="N0"), Sample(Idx(np.array([1, 2, 3])), name="int")]


def _trap_samples(rng, dt):
    A = _A(rng, dt)
    return [Sample(A((3, 4)), name="default"), Sample(A((3, 4)), dx=0.5, name="dx"),
            Sample(A((3, 4)), NoGrad(np.array([0.0, 1.0, 3.0, 4.5], dt)), name="x1d"),
            Sample(A((3, 4)), A((3, 4)), dim=0, name="x2d_dim0"), Sample(A((2, 3, 4)), A((3, 4)), name="x_bcast"),
            Sample(noncontig(A((4, 3))), dim=0, name="noncontig"), Sample(A((3, 0)), name="empty"),
            Sample(Idx(np.array([1, 2, 4])), name="int")]


def _trap_errors(name, zero_d_msg="Dimension specified as -1 but tensor has no dimensions"):
    def f():
        y = np.zeros((3, 4))
        return [ErrorSample(Sample(y, np.zeros(2)), RuntimeError, f"{name}: There must be one `x` value"),
                ErrorSample(Sample(Idx(np.array([True, False]))), RuntimeError, f"{name}: received a bool input"),
                ErrorSample(Sample(y, dx=True), RuntimeError, f"{name}: Currently, we only support dx as a real"),
                ErrorSample(Sample(np.zeros(())), IndexError, zero_d_msg),
                ErrorSample(Sample(y, 0.5), TypeError, f"{name}() received an invalid combination of arguments")]
    return f


def _ss_samples(rng, dt):
    s = np.sort(arr(rng, (6,), dt))
    v = arr(rng, (2, 3), dt)
    v[0, 0] = s[2]
    s2 = np.sort(arr(rng, (2, 5), dt), -1)
    perm = rng.permutation(6)
    return [Sample(NoGrad(s), NoGrad(v), name="left"), Sample(NoGrad(s), NoGrad(v), right=True, name="right"),
            Sample(NoGrad(s), NoGrad(v), side="right", out_int32=True, name="side_int32"),
            Sample(NoGrad(s[perm]), NoGrad(v), sorter=Idx(np.argsort(perm)), name="sorter"),
            Sample(NoGrad(s2), NoGrad(arr(rng, (2, 3), dt)), name="batched"), Sample(NoGrad(s), 0.3, name="scalar"),
            Sample(NoGrad(np.array([1.0, 3.0, np.nan], dt)), NoGrad(np.array([np.nan, 4.0, 0.0], dt)), name="nan"),
            Sample(NoGrad(s), Idx(np.array([0, 1, -1])), name="int_values")]


def _ss_errors():
    s, v = np.arange(5.0), np.zeros((2, 3))
    return [ErrorSample(Sample(s, v, side="foo"), RuntimeError, "side can only be 'left' or 'right' but got foo"),
            ErrorSample(Sample(s, v, side="left", right=True), RuntimeError, "side and right can't be set to opposites"),
            ErrorSample(Sample(s, v, sorter=Idx(np.array([0, 1, 2, 3, 5]))), RuntimeError, "sorter index out of range"),
            ErrorSample(Sample(s, v, sorter=Idx(np.array([0, 1, 2, 3]))), RuntimeError,
                        "boundary and sorter must have the same size"),
            ErrorSample(Sample(s, v, sorter=np.arange(5.0)), RuntimeError, "sorter must be a tensor of long dtype"),
            ErrorSample(Sample(np.zeros((2, 3)), np.zeros((1, 1))), RuntimeError, "boundaries tensor should be 1 dimension"),
            ErrorSample(Sample(np.array(1.0), v), RuntimeError, "boundaries tensor should have positive dimension"),
            ErrorSample(Sample(Idx(np.array([False, True])), Idx(np.array([True]))), NotImplementedError,
                        "\"searchsorted_out_cpu\" not implemented for 'Bool'")]


def _bk_samples(rng, dt):
    s = np.sort(arr(rng, (6,), dt))
    v = arr(rng, (2, 3), dt)
    return [Sample(NoGrad(v), NoGrad(s), name="left"), Sample(NoGrad(v), NoGrad(s), right=True, out_int32=True,
                                                              name="right_int32"),
            Sample(0.25, NoGrad(s), name="scalar")]


def _isin_samples(rng, dt):
    v = np.round(arr(rng, (3, 4), dt), 1)
    t = v.reshape(-1)[[0, 5, 7]].copy()
    return [Sample(NoGrad(v), NoGrad(t), name="plain"), Sample(NoGrad(v), NoGrad(t), invert=True, name="invert"),
            Sample(NoGrad(v), NoGrad(t), assume_unique=True, name="assume_unique"),
            Sample(float(v[0, 0]), NoGrad(v), name="scalar_element"), Sample(NoGrad(v), float(v[1, 1]), name="scalar_test"),
            Sample(Idx(np.array([3, 4])), NoGrad(np.array([3.5, 4.0], dt)), name="int_float"),
            Sample(NoGrad(np.array([np.nan, 1.0], dt)), NoGrad(np.array([np.nan], dt)), name="nan")]


def _tri_errors(name):
    return lambda: [ErrorSample(Sample(-1, 3), RuntimeError, "row must be non-negative, got-1"),
                    ErrorSample(Sample(3, -2), RuntimeError, "col must be non-negative, got-2"),
                    ErrorSample(Sample(3, 3, dtype="float32"), NotImplementedError, f"\"{name}\" not implemented for 'Float'")]


def _tri_op(name):
    def op(T, *a, **k):
        if "dtype" in k:
            k["dtype"] = getattr(T, k["dtype"])
        return getattr(T, name)(*a, **k)
    return op


def _tri_samples(rng, dt):
    return [Sample(3, 4, name="default"), Sample(4, 3, 1, name="offset1"), Sample(3, 5, -2, name="offset_neg"),
            Sample(0, 3, name="empty"), Sample(3, 3, dtype="int32", name="int32")]


def _unravel_samples(rng, dt):
    return [Sample(Idx(np.array([4, 5, 0])), (2, 3), name="basic"), Sample(Idx(np.array([[1234], [5678]])), (10, 100, 10),
                                                                          name="2d"),
            Sample(Idx(np.array(7)), 6, name="int_shape"), Sample(Idx(np.array(-1)), (2, 3), name="negative")]


def _method_split(name):
    return lambda T, a, *r: getattr(a, name)(*r)


def _gradient_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    c = TList(np.array([0.0, 1.0, 3.0], dt), np.array([0.0, 1.0, 1.5, 4.0], dt))
    return [Sample(A((3, 4)), name="default"), Sample(A((3, 4)), dim=1, name="dim"),
            Sample(A((3, 4)), dim=[1, 0], spacing=[2.0, 0.5], name="dims_spacing"),
            Sample(A((3, 4)), spacing=2.0, edge_order=2, name="edge2"),
            Sample(A((3, 4)), spacing=c, name="coords"), Sample(A((3, 4)), spacing=c, edge_order=2, name="coords_edge2"),
            Sample(Idx(np.array([1, 4, 9, 16])), spacing=2, name="int"), Sample(A(()), name="0d"),
            Sample(noncontig(A((4, 3))), edge_order=2, name="noncontig")]


def _gradient_errors():
    y = np.zeros((3, 4))
    return [ErrorSample(Sample(np.zeros(1)), RuntimeError, "expected each dimension size to be at least edge_order+1"),
            ErrorSample(Sample(y, edge_order=3), RuntimeError, "only supports edge_order=1 and edge_order=2."),
            ErrorSample(Sample(y, spacing=[1.0, 2, 3]), RuntimeError, "a list of length equal to 'self.dim() = 2'"),
            ErrorSample(Sample(y, spacing=[1.0, 2], dim=0), RuntimeError, "spacing and dim arguments to have the same"),
            ErrorSample(Sample(Idx(np.ones(3, np.uint8))), RuntimeError, "torch.gradient does not support uint8 input.")]


OPS = [
    OpInfo("hsplit", lambda T, a, s: T.hsplit(a, s), _hsplit_samples, errors=_dir_errors("hsplit", (4, 6), 1)),
    OpInfo("Tensor.hsplit", _method_split("hsplit"), _hsplit_samples, variant_of="hsplit"),
    OpInfo("vsplit", lambda T, a, s: T.vsplit(a, s), _vsplit_samples, errors=_dir_errors("vsplit", (6, 4), 2)),
    OpInfo("Tensor.vsplit", _method_split("vsplit"), _vsplit_samples, variant_of="vsplit"),
    OpInfo("dsplit", lambda T, a, s: T.dsplit(a, s), _dsplit_samples, errors=_dir_errors("dsplit", (2, 3, 6), 3)),
    OpInfo("Tensor.dsplit", _method_split("dsplit"), _dsplit_samples, variant_of="dsplit"),
    OpInfo("split_with_sizes", lambda T, a, *r: T.split_with_sizes(a, *r), _sws_samples, errors=_sws_errors),
    OpInfo("Tensor.split_with_sizes", _method_split("split_with_sizes"), _sws_samples, variant_of="split_with_sizes"),
    OpInfo("unsafe_split", lambda T, a, *r: T.unsafe_split(a, *r), _usplit_samples),
    OpInfo("Tensor.unsafe_split", _method_split("unsafe_split"), _usplit_samples, variant_of="unsafe_split"),
    OpInfo("unsafe_chunk", lambda T, a, *r: T.unsafe_chunk(a, *r), _usplit_samples),
    OpInfo("Tensor.unsafe_chunk", _method_split("unsafe_chunk"), _usplit_samples, variant_of="unsafe_chunk"),
    OpInfo("unsafe_split_with_sizes", lambda T, a, *r: T.unsafe_split_with_sizes(a, *r), _sws_samples,
           errors=_sws_errors),
    OpInfo("Tensor.unsafe_split_with_sizes", _method_split("unsafe_split_with_sizes"), _sws_samples,
           variant_of="unsafe_split_with_sizes"),
    OpInfo("block_diag", lambda T, ts: T.block_diag(*ts), _bd_samples,
           errors=lambda: [ErrorSample(Sample(TList(np.zeros((2, 2, 2)))), RuntimeError,
                                       "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3")]),
    OpInfo("cartesian_prod", lambda T, ts: T.cartesian_prod(*ts), _cp_samples,
           errors=lambda: [ErrorSample(Sample(TList(np.zeros((2, 2)))), RuntimeError, "Expect a 1D vector, but got shape [2, 2]"),
                           ErrorSample(Sample(TList(np.zeros(2), np.zeros(2, np.float32))), RuntimeError,
                                       "meshgrid expects all tensors to have the same dtype")]),
    OpInfo("combinations", lambda T, a, *r: T.combinations(a, *r), _comb_samples,
           errors=lambda: [ErrorSample(Sample(np.zeros((2, 2))), RuntimeError, "Expect a 1D vector, but got shape [2, 2]"),
                           ErrorSample(Sample(np.zeros(3), -1), RuntimeError, "Expect a non-negative number, but got -1")]),
    OpInfo("tril_indices", _tri_op("tril_indices"), _tri_samples, errors=_tri_errors("tril_indices"), **ND),
    OpInfo("triu_indices", _tri_op("triu_indices"), _tri_samples, errors=_tri_errors("triu_indices"), **ND),
    OpInfo("vander", lambda T, a, *r: T.vander(a, *r), _vander_samples, differentiable=False,   # torch's backward
           # raises (cumprod saved a slice its own copy_ then overwrites): tests/test_ops_more.py
           errors=lambda: [ErrorSample(Sample(np.zeros((2, 2))), RuntimeError, "x must be a one-dimensional tensor."),
                           ErrorSample(Sample(np.zeros(2), -1), RuntimeError, "N must be non-negative.")]),
    OpInfo("trapezoid", lambda T, y, *r, **k: T.trapezoid(y, *r, **k), _trap_samples, errors=_trap_errors("trapezoid")),
    OpInfo("trapz", lambda T, y, *r, **k: T.trapz(y, *r, **k), _trap_samples),
    OpInfo("cumulative_trapezoid", lambda T, y, *r, **k: T.cumulative_trapezoid(y, *r, **k), _trap_samples,
           errors=_trap_errors("cumulative_trapezoid", "slice() cannot be applied to a 0-dim tensor.")),
    OpInfo("gradient", lambda T, y, **k: T.gradient(y, **k), _gradient_samples, errors=_gradient_errors),
    OpInfo("argwhere", lambda T, a: T.argwhere(a), lambda rng, dt: [
        Sample(NoGrad(np.array([[0.0, 1.5], [2.0, 0.0]], dt)), name="2d"), Sample(NoGrad(np.array(3.0, dt)), name="0d"),
        Sample(NoGrad(np.zeros((2, 0), dt)), name="empty")], **ND),
    OpInfo("Tensor.argwhere", lambda T, a: a.argwhere(), lambda rng, dt: [
        Sample(NoGrad(np.array([[0.0, 1.5], [2.0, 0.0]], dt)), name="2d")], variant_of="argwhere", **ND),
    OpInfo("unravel_index", lambda T, i, s: T.unravel_index(i, s), _unravel_samples, **ND,
           errors=lambda: [ErrorSample(Sample(np.array(1.0), (2, 3)), TypeError, "expected 'indices' to be integer dtype"),
                           ErrorSample(Sample(Idx(np.array(1)), (2, -3)), ValueError,
                                       "'shape' cannot have negative values, but got (2, -3)")]),
    OpInfo("searchsorted", lambda T, s, v, **k: T.searchsorted(s, v, **k), _ss_samples, errors=_ss_errors, **ND),
    OpInfo("bucketize", lambda T, v, s, **k: T.bucketize(v, s, **k), _bk_samples, **ND,
           errors=lambda: [ErrorSample(Sample(np.zeros(3), np.zeros((2, 2))), RuntimeError,
                                       "boundaries tensor must be 1 dimension, but got dim(2)")]),
    OpInfo("isin", lambda T, e, t, **k: T.isin(e, t, **k), _isin_samples, **ND,
           errors=lambda: [ErrorSample(Sample(Idx(np.array([True])), Idx(np.array([True]))), RuntimeError,
                                       "Unsupported input type encountered for isin(): Bool")]),
]
