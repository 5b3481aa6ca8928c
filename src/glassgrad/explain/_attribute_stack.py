"""Stacked cotangents: run one backward formula for K loss terms at once.

A node's backward is written for one gradient ``g`` of the node's output shape ``S``.  For K terms
we stack their gradients into one array of shape ``(K,) + S`` and call the formula once, with a
namespace (``StackNS``) whose shape functions (``sum_to``, ``expand``, ``reshape``, ``permute``,
``sum``, ...) know about the extra leading axis.  Operators (``g * y``) broadcast the unstacked
saved tensors over it on the right.

That is only correct for formulas that touch ``g`` solely through operators that broadcast from
the right and through ``ns``'s functions -- so stacking is done only for the node classes that name a
rule in their ``stack_rule`` (``autograd.graph.Node``, declared beside the formula), each checked by
reading its formula; tests compare every rule with the per-term loop.
Formulas that look at ``g.ndim`` or reduce ``g`` against a saved tensor of higher rank get a
custom rule.  Every stacked result is checked to have shape ``(K,) + expected``; anything else
(an exception, a wrong shape) makes the caller fall back to one call per term.
"""
import numpy as np

from ..autograd.traversal import saved_values
from ..ops.namespaces import ArrayNamespace

__all__ = ["Unstackable", "StackNS", "stacked_call", "expected_in_shapes"]


class Unstackable(Exception):
    """A formula used a function the stacked namespace cannot offer: fall back to the loop."""


def _shift(d, n):
    """Axis `d` of a per-term array with `n` dims -> axis of the stacked array."""
    if n == 0:
        raise Unstackable("axis of a 0-d gradient")
    return d % n + 1


class StackNS(ArrayNamespace):
    """The array namespace for gradients stacked along a new leading axis of length K."""
    plain = False
    is_tensor_mode = False

    def __init__(self, K):
        self.K = K

    # -- shapes --------------------------------------------------------------------------
    def sum_to(self, g, shape):
        shape = tuple(shape)
        if g.shape[1:] == shape:
            return g
        lead = g.ndim - 1 - len(shape)
        if lead < 0:
            raise Unstackable("sum_to a larger rank")
        axes = tuple(range(1, 1 + lead)) + tuple(
            1 + lead + i for i, s in enumerate(shape) if s == 1 and g.shape[1 + lead + i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        return g.reshape((g.shape[0],) + shape)

    def expand(self, g, shape):
        shape = tuple(shape)
        s = g.shape[1:]
        extra = len(shape) - len(s)
        if extra < 0:
            raise Unstackable("expand to a smaller rank")
        if extra:
            g = g.reshape((g.shape[0],) + (1,) * extra + s)
        return np.broadcast_to(g, (g.shape[0],) + shape)

    def reshape(self, g, shape):
        return g.reshape((g.shape[0],) + tuple(shape))

    def permute(self, g, dims):
        n = g.ndim - 1
        return g.transpose((0,) + tuple(_shift(d, n) for d in dims))

    def transpose(self, g, d0, d1):
        n = g.ndim - 1
        return g.swapaxes(_shift(d0, n), _shift(d1, n))

    def unsqueeze(self, g, dim):
        return np.expand_dims(g, dim % g.ndim + 1)       # per-term result has g.ndim dims

    def squeeze(self, g, dims):
        n = g.ndim - 1
        if dims is None:
            dims = tuple(i for i in range(n) if g.shape[i + 1] == 1)
        elif not isinstance(dims, (tuple, list)):
            dims = (dims,)
        return g.squeeze(tuple(_shift(d, n) for d in dims))

    def sum(self, g, dims, keepdim=False):
        n = g.ndim - 1
        if dims is None:
            axes = tuple(range(1, g.ndim))
        elif isinstance(dims, (tuple, list)):
            axes = tuple(_shift(d, n) for d in dims)
        else:
            axes = _shift(dims, n)
        return g.sum(axis=axes, keepdims=keepdim)

    def cumsum(self, g, dim, reverse=False):
        return ArrayNamespace.cumsum(g, _shift(dim, g.ndim - 1), reverse)

    # -- values ----------------------------------------------------------------------------
    def zeros(self, shape, like):
        return np.zeros((self.K,) + tuple(shape), like.dtype, like=like)

    def outer(self, a, b):
        raise Unstackable("outer")

    def einsum(self, eq, *ops):
        raise Unstackable("einsum")

    def index_add_zeros(self, shape, index, g):
        shape = tuple(shape)
        K = g.shape[0]
        n = int(np.prod(shape, dtype=np.int64))
        pos = np.arange(n, like=g).reshape(shape)[index]          # flat positions, shaped like one term's g
        flat = np.broadcast_to(g, (K,) + pos.shape).reshape(K, -1)
        pos = pos.reshape(-1)
        out = np.zeros((K, n), g.dtype, like=g)
        if pos.size == 0:
            return out.reshape((K,) + shape)
        if np.bincount(pos, minlength=1).max() <= 1:      # no repeated index: a plain scatter
            out[:, pos] = flat
        else:
            for k in range(K):
                np.add.at(out[k], pos, flat[k])
        return out.reshape((K,) + shape)

    def view_scatter(self, shape, view_fn, g, dtype=None):
        out = np.zeros((g.shape[0],) + tuple(shape), g.dtype if dtype is None else dtype, like=g)
        for k in range(g.shape[0]):
            view_fn(out[k])[...] = g[k]
        return out

    def view_fill(self, g, view_fn, value):
        out = g.copy()
        for k in range(g.shape[0]):
            view_fn(out[k])[...] = value
        return out

    def apply_view(self, g, view_fn):
        return np.stack([view_fn(g[k]) for k in range(g.shape[0])])


# -- custom rules -------------------------------------------------------------------------------
def _generic(node, ns, g):
    return node.backward(ns, g)


def _t_rule(node, ns, g):                 # TBackward0 looks at g.ndim
    return (g.swapaxes(1, 2) if g.ndim == 3 else g,)


def _pointwise_rule(node, ns, g):         # mse / smooth_l1 / huber: g is () for mean/sum, S for 'none'
    x, t = ns.unpack(node)
    nd = len(np.broadcast_shapes(x.shape, t.shape))
    per = g.shape[1:]
    if len(per) < nd:
        g = g.reshape((g.shape[0],) + (1,) * (nd - len(per)) + per)
    return node.backward(ns, g)


def _nll_rule(node, ns, g):               # NllLossBackward0: M * g, g per term () or the batch shape
    M = node._mask()
    per = g.shape[1:]
    if per == ():
        ga = g.reshape((g.shape[0],) + (1,) * M.ndim)
    elif node.bdim is not None and len(per) == M.ndim - 1:
        ga = np.expand_dims(g, 2)
    else:
        ga = g
    return (M * ga,)


def _conv_rule(node, ns, gy):             # ConvolutionBackward0: fold K into the batch for dx; one GEMM for dw
    from ..ops import conv as C
    if node.transposed:
        raise Unstackable("transposed convolution")
    x, w = ns.unpack(node)
    s, p, d, grp = node.stride, node.padding, node.dilation, node.groups
    nd = len(s)
    K = gy.shape[0]
    want = [nf[0] is not None for nf in node.next_functions]
    gx = gw = gb = None
    if want[2]:
        gb = gy.sum(axis=(1,) + tuple(range(3, 3 + nd)))
    if want[0]:
        flat = gy.reshape((K * gy.shape[1],) + gy.shape[2:])
        gx = C.conv_input_grad_arr(flat, w, x.shape[2:], s, p, d, grp)
        gx = gx.reshape((K,) + x.shape)
    if want[1]:
        wshape = w.shape
        if x.size == 0 or gy.size == 0 or C._depthwise(w, grp):
            gw = np.stack([C.conv_weight_grad_arr(x, gy[k], wshape, s, p, d, grp) for k in range(K)])
        else:
            N, Co = gy.shape[1:3]
            O = gy.shape[3:]
            P = int(np.prod(O, dtype=np.int64))
            Og = Co // grp
            cols = C._cols(x, wshape[2:], s, p, d, O, grp)                          # (g, Cg*Kp, N*P)
            gm = gy.reshape(K, N, grp, Og, P).transpose(2, 0, 3, 1, 4).reshape(grp, K * Og, N * P)
            r = C._bmm(gm, cols.transpose(0, 2, 1))                               # (g, K*Og, Cg*Kp)
            gw = r.reshape(grp, K, Og, -1).transpose(1, 0, 2, 3).reshape((K,) + tuple(wshape))
    return (gx, gw, gb)


def _flat_mm(g, m):
    """Stacked g (K, n, k) @ m (k, j) as one GEMM over K*n rows."""
    K, n = g.shape[:2]
    return np.matmul(g.reshape(K * n, g.shape[2]), m).reshape(K, n, m.shape[1])


def _mm_rule(node, ns, g):                # MmBackward0: da = g @ b^T (one GEMM), db = a^T @ g (per term)
    a, b = ns.unpack(node)
    nf = node.next_functions
    ga = None if nf[0][0] is None else _flat_mm(g, b.T)
    gb = None if nf[1][0] is None else np.matmul(a.T, g)
    return (ga, gb)


def _addmm_rule(node, ns, g):             # AddmmBackward0 (linear): as MmBackward0, plus the bias
    beta, alpha, ishape = node.info
    _, m1, m2 = ns.unpack(node)
    gi = g1 = g2 = None
    if node.need(0):
        gi = ns.sum_to(g if beta == 1 else g * beta, ishape)
    if node.need(1):
        g1 = _flat_mm(g, m2.T)
        g1 = g1 if alpha == 1 else g1 * alpha
    if node.need(2):
        g2 = np.matmul(m1.T, g)
        g2 = g2 if alpha == 1 else g2 * alpha
    return (gi, g1, g2)


# a node class's ``stack_rule`` (autograd.graph.Node) -> the rule that runs it stacked
_RULES = {"generic": _generic, "t": _t_rule, "pointwise_loss": _pointwise_rule, "nll": _nll_rule,
          "conv": _conv_rule, "mm": _mm_rule, "addmm": _addmm_rule}


def rule_for(node):
    """The rule that runs `node`'s backward on stacked gradients, or None (one call per term): named by
    its class's ``stack_rule``, declared beside the formula."""
    name = type(node).stack_rule
    return None if name is None else _RULES[name]


def expected_in_shapes(node, out_shape):
    """The gradient shape each input edge must get (None where this module cannot tell)."""
    cls = type(node)
    f = _SHAPE_FNS.get(cls)
    if f is None:
        f = _SHAPE_FNS[cls] = _shape_fn_for(cls)
    try:
        return f(node, out_shape)
    except (AttributeError, TypeError, IndexError):
        return (None,) * len(node.next_functions)


_SHAPE_FNS = {}
_SAME_SHAPE = frozenset(("NegBackward0", "ExpBackward0", "LogBackward0", "SqrtBackward0", "PowBackward0",
                         "SoftmaxBackward0", "LogSoftmaxBackward0", "CloneBackward0", "ToCopyBackward0"))
_SAVED_SHAPES = frozenset(("MmBackward0", "AddmmBackward0", "MseLossBackward0", "SmoothL1LossBackward0",
                           "HuberLossBackward0"))


def _saved_shapes(n, o):
    return tuple(v.shape for v, _ in saved_values(n))


def _conv_shapes(n, o):
    sv = saved_values(n)
    x, w = sv[0][0], sv[1][0]
    return (x.shape, w.shape, (w.shape[0],))


def _shape_fn_for(cls):
    from ..ops import (unary as U, views as V, reduction as R, indexing as I,
                       loss as LS, conv as C)
    from ..ops._core import _Binary
    if issubclass(cls, _Binary):
        return lambda n, o: (n.ashape, n.bshape)
    if issubclass(cls, (V._ViewNode, R.SumBackward0, R.SumBackward1, R.MeanBackward0, R.MeanBackward1,
                        I.IndexBackward0)):
        return lambda n, o: (tuple(n.in_shape),)
    if issubclass(cls, LS.NllLossBackward0):
        return lambda n, o: (tuple(n.shape),)
    if issubclass(cls, C.ConvolutionBackward0):
        return _conv_shapes
    if cls.__name__ in _SAVED_SHAPES:
        return _saved_shapes
    if cls.__name__ in _SAME_SHAPE or issubclass(cls, (U._Unary, U._NoSave)):
        return lambda n, o: (o,)
    return lambda n, o: (None,) * len(n.next_functions)


def stacked_call(node, ns, g, out_shape, child_shapes):
    """Run `node`'s backward once on stacked `g` (K, *out_shape); returns the stacked input
    gradients, or None when the rule failed or produced a shape it must not (caller loops)."""
    rule = rule_for(node)
    if rule is None:
        return None
    try:
        outs = rule(node, ns, g)
    except (Unstackable, ValueError, IndexError, TypeError):
        return None
    nf = node.next_functions
    if outs is None or len(outs) != len(nf):
        return None
    exp = expected_in_shapes(node, out_shape)
    K = ns.K
    res = []
    for i, ((nxt, nr), o) in enumerate(zip(nf, outs)):
        if nxt is None or o is None:
            res.append(None)
            continue
        if not isinstance(o, np.ndarray) or o.ndim < 1 or o.shape[0] != K or o.dtype != g.dtype and \
                o.dtype.kind not in "fV":
            return None
        e = exp[i] if i < len(exp) else None
        if e is None:
            e = child_shapes(nxt, nr)
        if e is not None and o.shape[1:] != tuple(e):
            return None
        res.append(o)
    return res
