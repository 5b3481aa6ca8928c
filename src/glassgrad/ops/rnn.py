"""One LSTM layer (one direction) as a single fused op, as PyTorch's CPU LSTM runs it through oneDNN: the
outputs' grad_fn is MkldnnRnnLayerBackward0, with edges (input, weight_ih, weight_hh, bias_ih, bias_hh,
h0, c0) and outputs (output, h_n, c_n).

Forward: the input projection of all time steps is one GEMM per gate (both biases folded in), then each
step does one GEMM with the recurrent weight and the gate nonlinearities in place in a gate-major
(4, T, B, H) workspace that keeps the activated gates i, f, g, o (PyTorch's gate order), next to the cell
states and tanh(c).
Backward: one loop over time in reverse order computes the pre-activation gate gradients (one GEMM per
step for the recurrent term); the weight, bias and input gradients are then single GEMMs / sums over all
time steps.  The autograd graph of a layer is one node instead of ~15 per time step.

Higher-order gradients (create_graph=True): the backward recomputes the layer as the composite of
differentiable per-step ops (_run_direction below, nn/modules/rnn.py's general path) from the saved inputs
and differentiates that, so double backward works as it does through the composite.

The composite recurrence of every cell kind lives here too: one time step per cell kind (_step_rnn,
_step_lstm, _step_gru) and one layer/direction over padded or packed steps (_run_direction); and the
packing of padded sequences (_pack_padded, PackPaddedSequenceBackward0) under nn.utils.rnn.
"""
import numpy as np

from .. import _cuda_kernels
from .._blas import matmul as gemm
from .._cuda_kernels import seq as _k_seq

from ._core import make, edge, save_in, save_out, grad
from ..autograd.graph import Node, freed_error
from ..autograd.saved_hooks import STACK as _SAVED_HOOKS
from ..autograd import grad as autograd_grad
from ..autograd.grad_mode import enable_grad
from .addmm import linear
from .shape import cat, stack

__all__ = ["lstm_layer", "MkldnnRnnLayerBackward0", "PackPaddedSequenceBackward0"]


_GATE_SCALE = (0.5, 0.5, 1.0, 0.5)     # i, f, g, o: sigmoid(x) = tanh(x / 2) / 2 + 1/2, g = tanh(x)
_GATE_SHIFT = (0.5, 0.5, 0.0, 0.5)
_FUSED = (np.dtype(np.float32), np.dtype(np.float64))


def _scaled_transpose(w, scale):
    """(w * scale[:, None]).T as a C-contiguous array, copied in row blocks (a plain transposed copy of a
    (1024, 256) matrix is ~2x slower: it walks the source column-wise)."""
    n = w.shape[0]
    out = np.empty((w.shape[1], n), w.dtype, like=w)
    if w.__class__ is not np.ndarray:     # a device: one launch (the row blocks are for the CPU's caches)
        np.multiply(w.T, scale, out=out)
        return out
    for j in range(0, n, 64):
        np.multiply(w[j:j + 64].T, scale[j:j + 64], out=out[:, j:j + 64])
    return out


def _forward(x, h0, c0, w_ih, w_hh, bias, reverse):
    """x (T, B, I), h0/c0 (B, H) arrays.  Returns (out (T, B, H), workspace): the workspace holds the
    activated gates gate-major, acts (4, T, B, H) = i, f, g, o (each gate contiguous for the backward);
    hs / cs (T+1, B, H), with h0 / c0 in the slot before the first step (index 0 forward, T in reverse:
    slicing [:-1] / [1:] gives every step's previous state); and tanh(c) (T, B, H).

    All four gates go through one tanh: the pre-activations of i, f, o are computed halved, with the
    weights and bias scaled by 1/2 -- exact in binary floating point, so the GEMMs give exactly half of
    the unscaled ones -- and sigmoid(x) = tanh(x / 2) / 2 + 1/2."""
    T, B, _ = x.shape
    H = h0.shape[1]
    dt = x.dtype
    rows = np.repeat(np.array(_GATE_SCALE, dt, like=x), H)            # (4H,) per weight row
    # the input projection of all steps, one GEMM per gate, straight into the gate buffer; step t then
    # replaces its projections by its activations
    acts = np.empty((4, T, B, H), dt, like=x)
    x2 = x.reshape(T * B, -1)
    w_ih_s = w_ih * rows[:, None]
    for k in range(4):
        gemm(x2, w_ih_s[k * H:(k + 1) * H].T, out=acts[k].reshape(T * B, H))
    fused = _fused(x)
    bsc = None if bias is None else bias * rows
    if bias is not None and not fused:
        acts += bsc.reshape(4, 1, 1, H)
    w_hhT = _scaled_transpose(w_hh, rows)   # h @ W^T with a transposed operand is ~1.5x slower at B rows
    hs = np.empty((T + 1, B, H), dt, like=x)
    cs = np.empty((T + 1, B, H), dt, like=x)
    tcs = np.empty((T, B, H), dt, like=x)
    pre = np.empty((B, 4, H), dt, like=x)
    if reverse:
        steps, prev = range(T - 1, -1, -1), 1     # step t reads slot t + 1, writes slot t
        hs[T], cs[T] = h0, c0
    else:
        steps, prev = range(T), 0                 # step t reads slot t, writes slot t + 1
        hs[0], cs[0] = h0, c0
    if fused:                                     # a GPU: the step's pointwise work in one kernel (bias included)
        pre2 = pre.reshape(B, 4 * H)
        for t in steps:
            gemm(hs[t + prev], w_hhT, out=pre2)
            _k_seq.lstm_forward_step(pre, acts, bsc, hs, cs, tcs, t, t + prev, t + 1 - prev)
    else:
        _forward_steps(acts, hs, cs, tcs, pre, w_hhT, steps, prev)
    out = hs[:-1] if reverse else hs[1:]
    return out, (acts, hs, cs, tcs)


def _forward_steps(acts, hs, cs, tcs, pre, w_hhT, steps, prev):
    """_forward's recurrence as array code."""
    _, _, B, H = acts.shape
    dt = acts.dtype
    pre2 = pre.reshape(B, 4 * H)
    tmp = np.empty((B, H), dt, like=acts)
    scale = np.array(_GATE_SCALE, dt, like=acts).reshape(4, 1, 1)
    shift = np.array(_GATE_SHIFT, dt, like=acts).reshape(4, 1, 1)
    i, f, g, o = acts
    for t in steps:
        src, dst = t + prev, t + 1 - prev
        a = acts[:, t]                            # (4, B, H): this step's input projections
        at = a.transpose(1, 0, 2)                 # (B, 4, H), as the GEMM's rows
        gemm(hs[src], w_hhT, out=pre2)
        pre += at
        np.tanh(pre, out=at)
        a *= scale
        a += shift
        c = cs[dst]
        np.multiply(f[t], cs[src], out=c)
        np.multiply(i[t], g[t], out=tmp)
        c += tmp
        np.tanh(c, out=tcs[t])
        np.multiply(o[t], tcs[t], out=hs[dst])


def _fused(x):
    return x.__class__ is not np.ndarray and x.dtype in _FUSED and _cuda_kernels.available()


def _backward_steps(gout, acts, cs, tcs, dgates, dh, dc, w_hh, reverse, steps, last, need):
    """_backward's recurrence as array code: dgates, dh and dc filled in."""
    i, f, g, o = acts
    _, T, B, H = acts.shape
    dt = acts.dtype
    c_prev = cs[1:] if reverse else cs[:-1]
    # the factors that do not depend on the recurrence, for all steps at once (contiguous, no temporaries):
    # d(pre-activation of i, f, g) = dc * fac[0:3];  d(pre-activation of o) = dh * fac[3]
    fac = np.empty((4, T, B, H), dt, like=acts)
    fi, ff, fg, fo = fac
    np.subtract(1, i, out=fi)                     # sigmoid' = s (1 - s), tanh' = 1 - g^2
    fi *= i
    fi *= g
    np.subtract(1, f, out=ff)
    ff *= f
    ff *= c_prev
    np.multiply(g, g, out=fg)
    np.subtract(1, fg, out=fg)
    fg *= i
    np.subtract(1, o, out=fo)
    fo *= o
    fo *= tcs
    dc_dh = np.multiply(tcs, tcs)                 # d c_t / d h_t = o * (1 - tanh(c)^2)
    np.subtract(1, dc_dh, out=dc_dh)
    dc_dh *= o
    tmp = np.empty((B, H), dt, like=acts)
    for t in steps:
        if gout is not None:
            dh += gout[t]
        np.multiply(dh, dc_dh[t], out=tmp)
        dc += tmp
        dg = dgates[t]
        dg4 = dg.reshape(B, 4, H)
        np.multiply(dc, fac[:3, t], out=dg4[:, :3].transpose(1, 0, 2))
        np.multiply(dh, fac[3, t], out=dg4[:, 3])
        dc *= f[t]
        if t != last or need[5]:                  # (no GEMM for an unwanted h0 gradient)
            gemm(dg, w_hh, out=dh)


def _backward(gout, ghn, gcn, x, w_ih, w_hh, ws, reverse, need):
    """Array gradients (x, w_ih, w_hh, b_ih, b_hh, h0, c0) of one layer from the output gradients (any may
    be None); need[k] says whether input k wants one."""
    acts, hs, cs, tcs = ws
    _, T, B, H = acts.shape
    dt = x.dtype
    dgates = np.empty((T, B, 4 * H), dt, like=x)   # pre-activation gate gradients, rows as the forward GEMMs'
    dh = np.zeros((B, H), dt, like=x) if ghn is None else np.array(ghn, dt, like=x)
    dc = np.zeros((B, H), dt, like=x) if gcn is None else np.array(gcn, dt, like=x)
    last = T - 1 if reverse else 0
    steps = range(T) if reverse else range(T - 1, -1, -1)
    if _fused(x) and (gout is None or gout.dtype == dt):     # a GPU: the step's pointwise work in one kernel
        if gout is not None and not gout.flags.c_contiguous:
            gout = gout.copy(order="C")
        for t in steps:
            _k_seq.lstm_backward_step(acts, cs, tcs, gout, dh, dc, dgates, t, t + 1 if reverse else t)
            if t != last or need[5]:
                gemm(dgates[t], w_hh, out=dh)
    else:
        _backward_steps(gout, acts, cs, tcs, dgates, dh, dc, w_hh, reverse, steps, last, need)
    d2 = dgates.reshape(T * B, 4 * H)
    gx = gwi = gwh = gb = None
    if need[0]:
        gx = gemm(d2, w_ih).reshape(x.shape)
    if need[1]:
        gwi = gemm(d2.T, x.reshape(T * B, -1))
    if need[2]:
        h_prev = hs[1:] if reverse else hs[:-1]
        gwh = gemm(d2.T, h_prev.reshape(T * B, H))
    if need[3] or need[4]:
        gb = d2.sum(0)
    return (gx, gwi, gwh, gb if need[3] else None, (gb.copy() if need[3] else gb) if need[4] else None,
            dh if need[5] else None, dc if need[6] else None)


class MkldnnRnnLayerBackward0(Node):
    __slots__ = ("ws", "hooked", "biases", "reverse", "has_biases", "hidden_size", "mode", "num_layers", "batch_first",
                 "bidirectional", "train", "batch_sizes")
    n_outputs = 3
    _saved_names = ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_", "result0", "result1",
                    "result2")

    def _release(self):
        self._saved = None
        self.ws = None

    def backward(self, ns, grads):
        saved = ns.unpack(self)
        need = [n is not None for n, _ in self.next_functions]
        if ns.is_tensor_mode:
            return _composite_backward(self, saved, grads, need)
        x, w_ih, w_hh = saved[0], saved[1], saved[2]
        ws = self.ws
        if ws is None:          # saved through saved-tensor hooks: the workspace is rebuilt from what they hand back
            if not self.hooked:
                raise freed_error()
            ws = _forward(x, saved[5], saved[6], w_ih, w_hh, saved[3] + saved[4], self.reverse)[1]
        return _backward(grads[0], grads[1], grads[2], x, w_ih, w_hh, ws, self.reverse, need)


def _composite_backward(node, saved, grads, need):
    """create_graph: differentiate the per-step composite recomputed from the saved input Tensors."""
    x, w_ih, w_hh, b_ih, b_hh, h0, c0 = saved[:7]
    ins = [x, w_ih, w_hh, b_ih, b_hh, h0, c0]
    # fresh aliases: each input gets its own gradient even when one tensor is passed twice (h0 is c0)
    wanted = [k for k in range(7) if need[k]]
    if not wanted:
        return (None,) * 7
    alias = list(ins)
    with enable_grad():
        for k in wanted:
            alias[k] = ins[k].view_as(ins[k])
        for k, present in ((3, node.biases[0]), (4, node.biases[1])):
            if not present:
                alias[k] = None            # the saved zeros stand in for an absent bias
        outs = _run_direction(_step_lstm, alias[0], None, alias[5], alias[6], alias[1], alias[2], alias[3],
                              alias[4], None, node.reverse)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
        res = autograd_grad([o for o, _ in pairs], [alias[k] for k in wanted], [g for _, g in pairs],
                            create_graph=True, allow_unused=True)
    out = [None] * 7
    for k, r in zip(wanted, res):
        out[k] = r if r is not None else ins[k].new_zeros(ins[k].shape)
    return tuple(out)


def lstm_layer(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, reverse=False, *, batch_first=False,
               bidirectional=False, train=True):
    """One direction of one LSTM layer: x (T, B, I) with T > 0, h0 / c0 (B, H), weights (4H, I), (4H, H),
    biases (4H,) or None, all of one dtype; gate order i, f, g, o.  Returns (output (T, B, H), h_n, c_n).
    The keyword flags are only recorded on the node (torch's _saved_* attributes)."""
    xd, wi, wh = x._data, w_ih._data, w_hh._data
    bs = [b._data for b in (b_ih, b_hh) if b is not None]
    bias = bs[0] + bs[1] if len(bs) == 2 else (bs[0] if bs else None)
    out, ws = _forward(xd, h0._data, c0._data, wi, wh, bias, reverse)
    hs, cs = ws[1], ws[2]
    last = 0 if reverse else -1
    hn, cn = hs[last].copy(), cs[last].copy()
    ts = (x, w_ih, w_hh, b_ih, b_hh, h0, c0)
    if grad.enabled and any(t is not None and t._rg for t in ts):
        n = MkldnnRnnLayerBackward0(tuple(edge(t) if t is not None else (None, 0) for t in ts))
        n.hooked = bool(_SAVED_HOOKS)     # under saved-tensor hooks the gate workspace is not kept (checkpoint
        n.ws = None if n.hooked else ws   # drops it; backward recomputes it from the unpacked inputs)
        n.reverse = reverse
        n.biases = (b_ih is not None, b_hh is not None)
        n.has_biases = b_ih is not None and b_hh is not None
        n.hidden_size = h0.shape[1]
        n.mode = 2                       # ATen's LSTM mode number
        n.num_layers = 1
        n.batch_first = batch_first
        n.bidirectional = bidirectional
        n.train = train
        n.batch_sizes = ()
        res = (make(out, True, n, 0), make(hn, True, n, 1), make(cn, True, n, 2))
        zb = None
        if b_ih is None or b_hh is None:    # torch saves zeros for a layer without biases
            zb = make(np.zeros(wi.shape[0], xd.dtype, like=xd))
        n._saved = (tuple(save_in(t if t is not None else zb) for t in ts) + tuple(save_out(r) for r in res))
        return res
    return make(out), make(hn), make(cn)


# -- one time step of each cell kind (gates: x part already projected, with its bias) ---------------
def _step_rnn(act):
    def step(xg, h, c, w_hh, b_hh, w_hr):
        g = xg + linear(h, w_hh, b_hh)
        return (g.tanh() if act == "tanh" else g.relu()), None
    return step


def _step_lstm(xg, h, c, w_hh, b_hh, w_hr):
    gates = xg + linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h2 = o.sigmoid() * c2.tanh()
    if w_hr is not None:
        h2 = linear(h2, w_hr, None)
    return h2, c2


def _step_gru(xg, h, c, w_hh, b_hh, w_hr):
    hg = linear(h, w_hh, b_hh)
    xr, xz, xn = xg.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r = (hr + xr).sigmoid()
    z = (hz + xz).sigmoid()
    n = (xn + hn * r).tanh()
    return (h - n) * z + n, None


def _run_direction(step, x, bs, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, reverse):
    """One layer, one direction.  x: (T, B, I) padded steps, or (N, I) packed rows when bs (the batch size
    of each step) is given; h0/c0: (B, H) initial states.
    Returns (outputs (T, B, H) or (N, H), h_n (B, H), c_n or None)."""
    xp = linear(x, w_ih, b_ih)
    padded = bs is None
    if padded:
        bs = [x.shape[1]] * x.shape[0]
    offs = np.concatenate([[0], np.cumsum(bs)]).tolist()
    rows = (lambda t: xp[t]) if padded else (lambda t: xp[offs[t]:offs[t + 1]])
    T = len(bs)
    outs = [None] * T
    is_lstm = c0 is not None
    if not reverse:
        h, c = h0, c0
        done_h, done_c = [], []
        cur = h0.shape[0]
        for t in range(T):
            b = bs[t]
            if b < cur:
                done_h.append(h[b:cur])
                h = h[:b]
                if is_lstm:
                    done_c.append(c[b:cur])
                    c = c[:b]
                cur = b
            h, c = step(rows(t), h, c, w_hh, b_hh, w_hr)
            outs[t] = h
        if done_h:
            h = cat([h] + done_h[::-1], 0)
            if is_lstm:
                c = cat([c] + done_c[::-1], 0)
    else:
        cur = bs[-1] if T else h0.shape[0]
        h = h0[:cur]
        c = c0[:cur] if is_lstm else None
        for t in range(T - 1, -1, -1):
            b = bs[t]
            if b > cur:
                h = cat([h, h0[cur:b]], 0)
                if is_lstm:
                    c = cat([c, c0[cur:b]], 0)
                cur = b
            h, c = step(rows(t), h, c, w_hh, b_hh, w_hr)
            outs[t] = h
        if cur < h0.shape[0]:
            h = cat([h, h0[cur:]], 0)
            if is_lstm:
                c = cat([c, c0[cur:]], 0)
    if not T:
        return xp.new_zeros(tuple(xp.shape[:-1]) + (h0.shape[-1],)), h, c
    return (stack(outs, 0) if padded else cat(outs, 0)), h, c


# -- packing padded sequences (nn.utils.rnn.pack_padded_sequence) ----------------------------------------
class PackPaddedSequenceBackward0(Node):
    """The packed rows' gradient scattered back into zeros of the padded input's shape."""
    __slots__ = ("shape", "index")

    def backward(self, ns, g):
        return (ns.index_add_zeros(self.shape, self.index, g),)


def _pack_padded(input, bs, batch_first):
    """Rows input[t, :bs[t]] for every step t, one after another (nn.utils.rnn.pack_padded_sequence's
    data; PackPaddedSequenceBackward0 scatters the gradient back)."""
    a = input._data
    t_idx = np.repeat(np.arange(len(bs), like=a), [int(b) for b in bs])
    b_idx = np.concatenate([np.arange(b, like=a) for b in bs]) if bs else np.zeros(0, np.int64, like=a)
    index = (b_idx, t_idx) if batch_first else (t_idx, b_idx)
    data = input._data[index]
    if input._rg and grad.enabled:
        n = PackPaddedSequenceBackward0((edge(input),))
        n.shape, n.index = tuple(input.shape), index
        return make(data, True, n)
    return make(data)
