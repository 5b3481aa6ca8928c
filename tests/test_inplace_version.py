"""Version counters and in-place checks, differential against torch."""
import pytest

import glassgrad
from test_autograd_engine import diff


def _x(T, vals=(1.0, 2.0, 3.0), rg=True):
    return T.tensor(list(vals), requires_grad=rg)


def test_version_bumps():
    def f(T):
        a = T.tensor([1.0, 2.0, 3.0])
        v = [a._version]
        a.add_(1)
        v.append(a._version)
        a.mul_(2)
        v.append(a._version)
        b = a[1:]
        b.add_(1)
        v += [a._version, b._version]
        a[0:1] = 5.0
        v += [a._version, b._version]
        return v, a
    diff(f)


def test_leaf_inplace_error():
    diff(lambda T: _x(T).mul_(2))
    diff(lambda T: _x(T).add_(1))


def test_view_of_leaf_inplace_error():
    diff(lambda T: _x(T)[0:2].mul_(2))


def _view_leaf(T):
    """A view made a leaf that requires grad: its base needs no grad (torch still refuses writes into it)."""
    return T.arange(6.0).reshape(2, 3).requires_grad_()


def test_a_view_made_a_leaf_refuses_inplace_writes_and_so_do_its_views():
    diff(lambda T: _view_leaf(T).add_(1))
    diff(lambda T: _view_leaf(T).__setitem__(0, 1.0))          # was silently accepted
    diff(lambda T: _view_leaf(T)[1].mul_(2))


def test_a_view_of_a_plain_buffer_still_takes_an_inplace_write_that_needs_grad():
    def f(T):
        buf = T.zeros(3)
        w = T.ones(3, requires_grad=True)
        v = buf[:2]
        v.add_(w[:2] * 2)
        v.sum().backward()
        return buf, w.grad
    diff(f)


def test_leaf_inplace_under_no_grad_ok():
    def f(T):
        x = _x(T)
        with T.no_grad():
            x.mul_(2)
        return x, x._version, x.requires_grad, x.is_leaf
    diff(f)


def test_modified_saved_output():
    def f(T):
        x = _x(T)
        y = x.exp()
        y.mul_(2)
        y.sum().backward()
    diff(f)


def test_modified_saved_nonleaf_input():
    def f(T):
        x = _x(T)
        h = x * 1
        y = h * h
        h.add_(1)
        y.sum().backward()
    diff(f)


def test_modified_saved_leaf_input():
    def f(T):
        x = _x(T)
        w = T.tensor([1.0, 2.0, 3.0])
        y = x * w
        w.add_(1)
        y.sum().backward()
    diff(f)


def test_modified_saved_output_exp_then_mul():
    def f(T):
        x = _x(T)
        h = x * 1
        y = h.exp()
        h.add_(1)            # exp saved its result, not h: fine
        y.sum().backward()
        return x.grad
    diff(f)


def test_version_error_under_anomaly():
    def f(T):
        x = _x(T)
        with T.autograd.set_detect_anomaly(True):
            h = x.exp()
            h.add_(1)
            h.sum().backward()
    diff(f, warns=False)


def test_inplace_nonleaf_works():
    def f(T):
        x = _x(T)
        y = x * 2
        y.add_(1)
        y.mul_(3)
        (y * y).sum().backward()
        return x.grad, y.grad_fn, y._version
    diff(f)


def test_inplace_through_view_of_nonleaf():
    def f(T):
        x = _x(T)
        y = x.clone()
        y[0:2].mul_(2)
        z = (y * y).sum()
        z.backward()
        return y.grad_fn.name(), x.grad, y._version
    diff(f)


def test_setitem_nonleaf():
    def f(T):
        x = _x(T)
        y = x * 1
        y[1:2] = 0.0
        y.sum().backward()
        return x.grad, y.grad_fn.name()
    diff(f)


def test_data_vs_detach_versions():
    def f(T):
        x = _x(T)
        d = x.data
        e = x.detach()
        d.add_(0)
        v1 = x._version
        e.add_(0)
        return v1, x._version, e._version, d._version, d.requires_grad, e.requires_grad
    diff(f)


def test_detach_modification_detected():
    def f(T):
        x = _x(T)
        y = x.exp()
        y.detach().zero_()
        y.sum().backward()
    diff(f)


def test_data_modification_not_detected():
    def f(T):
        x = _x(T)
        y = x.exp()
        y.data.zero_()
        y.sum().backward()
        return x.grad
    diff(f)


def test_view_taken_before_an_inplace_write_to_its_base():
    """A view whose base is rewritten in place afterwards sees the new history (no stale gradient)."""
    import glassgrad as gg
    import torch as th
    res = []
    for T in (th, gg):
        x = T.ones(3, requires_grad=True)
        y = x.clone()
        v = y[0]
        y.mul_(2)
        (v * 3).backward()
        buf = T.zeros(3)
        w = buf[1:]
        buf.add_(x)
        res.append((x.grad.tolist(), v.grad_fn.name(), w.requires_grad, w.grad_fn.name()))
    assert res[0] == res[1]


def test_fill_and_zero_write_through_elements_that_share_memory():
    """torch lets fill_/zero_ (one value everywhere) write into an expanded tensor, and refuses other in-place
    ops there; the write reaches the base."""
    def fill(T, op):
        b = T.zeros(1, 3)
        t = b.expand(2, 3)
        getattr(t, op)(*((2.0,) if op == "fill_" else ()))
        return b, t, [b._version, t._version]
    diff(lambda T: fill(T, "fill_"))
    diff(lambda T: fill(T, "zero_"))
    diff(lambda T: T.zeros(1, 3).expand(2, 3).add_(1))
    diff(lambda T: T.zeros(1, 3).expand(2, 3).normal_())


def test_modifying_a_saved_index_tensor_is_detected_as_torch():
    """index_put / x[mask] = v save their index tensors: rewriting one before backward is torch's version error
    (it was a silent wrong gradient: the backward read the rewritten mask)."""
    import torch
    for lib in (torch, glassgrad):
        for how in ("setitem", "index_put"):
            x = lib.zeros(3, requires_grad=True)
            m = lib.tensor([True, False, True])
            if how == "setitem":
                y = x * 1
                y[m] = lib.tensor(1.0)
            else:
                y = lib.index_put(x * 1, (m,), lib.tensor(1.0))
            m[0] = False
            with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[CPUBoolType \[3\]\] is at "
                                                   r"version 1; expected version 0"):
                y.sum().backward()



# -- index / mask / target tensors an op's backward reads are saved: rewriting one in place before backward is
# torch's version error (before, glassgrad silently used the rewritten values: wrong gradients)
def _index_cases(L):
    i = lambda: L.tensor([[0, 1], [1, 0]])
    m = lambda: L.tensor([[True, False], [False, True]])
    return {
     "gather": (i, lambda x, ix: L.gather(x, 1, ix)),
     "scatter": (i, lambda x, ix: L.scatter(x, 1, ix, x)),
     "scatter_add": (i, lambda x, ix: L.scatter_add(x, 1, ix, x)),
     "index_select": (lambda: L.tensor([1, 0]), lambda x, ix: L.index_select(x, 0, ix)),
     "index_add": (lambda: L.tensor([1, 0]), lambda x, ix: x.index_add(0, ix, x)),
     "index_copy": (lambda: L.tensor([1, 0]), lambda x, ix: x.index_copy(0, ix, x)),
     "index_fill": (lambda: L.tensor([1]), lambda x, ix: x.index_fill(0, ix, 0.0)),
     "masked_fill": (m, lambda x, mm: x.masked_fill(mm, 0.0)),
     "masked_select": (m, lambda x, mm: x.masked_select(mm)),
     "masked_scatter": (m, lambda x, mm: x.masked_scatter(mm, x)),
     "take": (lambda: L.tensor([0, 3]), lambda x, ix: L.take(x, ix)),
     "take_along_dim": (i, lambda x, ix: L.take_along_dim(x, ix, 1)),
     "getitem": (lambda: L.tensor([1, 0]), lambda x, ix: x[ix]),
     "getitem_mask": (m, lambda x, mm: x[mm]),
     "where": (m, lambda x, mm: L.where(mm, x, 0.0)),
     "embedding": (lambda: L.tensor([1, 0]), lambda x, ix: L.nn.functional.embedding(ix, x)),
     "nll_loss": (lambda: L.tensor([1, 0]), lambda x, ix: L.nn.functional.nll_loss(x, ix)),
     "cross_entropy": (lambda: L.tensor([1, 0]), lambda x, ix: L.nn.functional.cross_entropy(x, ix)),
    }


@pytest.mark.parametrize("name", sorted(_index_cases(glassgrad)))
def test_rewritten_index_tensors_as_torch(name):
    import numpy as np
    import torch
    seen = []
    for lib in (torch, glassgrad):
        make_index, fn = _index_cases(lib)[name]
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        index = make_index()
        y = fn(x * 1, index)
        index.zero_() if index.dtype != lib.bool else index.fill_(False)
        try:
            y.sum().backward()
            seen.append(("ok", np.round(x.grad.numpy(), 5).tolist()))
        except RuntimeError as e:
            seen.append(("error", str(e).split(" Hint:")[0]))
    assert seen[1] == seen[0]
