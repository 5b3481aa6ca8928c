"""Overwriting a view of a non-leaf with constants (fill_, zero_, the random initialisers) rewrites its base's
graph as any in-place op through a view does: the overwritten region passes no gradient back, the rest does.
(Before, only the view's own node changed and the base kept passing gradient through the overwritten region.)"""
import pytest
import torch

import glassgrad

CASES = {
    "diagonal_fill": lambda T, y: y.diagonal().fill_(2.0),
    "row_zero": lambda T, y: y[0].zero_(),
    "slice_fill_tensor": lambda T, y: y[1:, 1:].fill_(T.tensor(5.0)),
    "column_uniform": lambda T, y: y[:, 2].uniform_(),
    "select_normal": lambda T, y: y.select(1, 1).normal_(),
    "view_of_view": lambda T, y: y.t()[1].fill_(-1.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_overwrite_through_a_view_as_torch(name):
    res = []
    for T in (torch, glassgrad):
        T.manual_seed(0)
        x = T.arange(1.0, 10.0).reshape(3, 3).requires_grad_()
        y = x * 1.5
        CASES[name](T, y)
        (y * y).sum().backward()
        res.append((y.detach().tolist(), x.grad.tolist(), type(y.grad_fn).__name__))
    assert res[1][0] == res[0][0] and res[1][1] == res[0][1], name
    assert res[1][2] == res[0][2] == "CopySlices"
