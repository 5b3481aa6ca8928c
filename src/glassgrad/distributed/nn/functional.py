"""torch.distributed.nn.functional: the collectives as autograd Functions.

Each function returns a new tensor (the input is not written) and its backward runs the adjoint collective
(all_reduce <-> all_reduce, broadcast <-> reduce, gather <-> scatter, all_gather <-> all_to_all + sum,
all_to_all <-> all_to_all), as torch does.  Like torch, broadcast / all_reduce / all_gather / reduce_scatter /
all_to_all_single warn that they are deprecated in favour of torch.distributed._functional_collectives.
"""
import warnings

from ...autograd import Function
from ...ops import creation as _creation
from ...ops import reduction as _reduction
from ...ops import shape as _shape
from .. import collectives_more as _more
from .. import distributed_c10d as _c10d
from .. import collectives as _coll

__all__ = ["broadcast", "gather", "scatter", "reduce", "reduce_scatter", "all_gather", "all_to_all",
           "all_to_all_single", "all_reduce"]

ReduceOp = _c10d.ReduceOp
group = _c10d.group


def _deprecated(name, suggestion=None):
    suggestion = suggestion or name
    warnings.warn(f"torch.distributed.nn.functional.{name} is deprecated, use "
                  f"torch.distributed._functional_collectives.{suggestion} instead.", FutureWarning, stacklevel=3)


def broadcast(tensor, src, group=group.WORLD):
    """The tensor of rank ``src``, on every rank (the gradient is summed onto ``src``)."""
    _deprecated("broadcast")
    return _Broadcast.apply(src, group, tensor)


def gather(tensor, dst=0, group=group.WORLD):
    """A tuple of every rank's tensor, filled on rank ``dst`` (zeros elsewhere)."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=group.WORLD):
    """Rank ``src``'s ``tensors[i]`` on rank i."""
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction of every rank's tensor, on rank ``dst``."""
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction over ranks of ``input_list[rank]``, written to ``output`` and returned."""
    _deprecated("reduce_scatter", "reduce_scatter_single")
    return _Reduce_Scatter.apply(op, group, output, *input_list)


def all_gather(tensor, group=group.WORLD):
    """A tuple of every rank's tensor, on every rank."""
    _deprecated("all_gather", "all_gather_single")
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=group.WORLD):
    """Rank j's ``input_tensor_list[i]`` lands in rank i's ``output_tensor_list[j]``; returns that tuple."""
    return _AlltoAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=group.WORLD):
    """all_to_all on the chunks of one tensor along dim 0; returns ``output``."""
    _deprecated("all_to_all_single")
    return _AlltoAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)


def all_reduce(tensor, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction of every rank's tensor, on every rank (a new tensor)."""
    _deprecated("all_reduce")
    return _AllReduce.apply(op, group, tensor)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group, ctx.rank = src, group, _c10d.get_rank(group=group)
        out = tensor.clone()
        _coll.broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        gx = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad_output)
        if ctx.rank != ctx.src:
            gx.zero_()
        return None, None, gx


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        outs = [_creation.zeros_like(tensor) for _ in range(_c10d.get_world_size(group=group))]
        tensor = tensor.contiguous()
        _coll.gather(tensor, outs if _c10d.get_rank(group=group) == dst else None, dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None, None, _Scatter.apply(ctx.dst, ctx.group, *grad_outputs))


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        if any(t.size() != tensors[0].size() for t in tensors):
            raise AssertionError
        out = _creation.zeros_like(tensors[0])
        _coll.scatter(out, list(tensors) if _c10d.get_rank(group=group) == src else None, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None) + _Gather.apply(ctx.src, ctx.group, grad_output)


class _Reduce(Function):
    @staticmethod
    def forward(ctx, src, op, group, tensor):
        ctx.src, ctx.group = src, group
        out = tensor.clone()
        _coll.reduce(out, src, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None, _Broadcast.apply(ctx.src, ctx.group, grad_output)


class _Reduce_Scatter(Function):
    @staticmethod
    def forward(ctx, op, group, tensor, *input_tensor_list):
        ctx.group = group
        tensor = tensor.contiguous()
        _coll.reduce_scatter(tensor, [t.contiguous() for t in input_tensor_list], op=op, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, None) + _AllGather.apply(ctx.group, grad_output)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        tensor = tensor.contiguous()
        outs = [_creation.empty_like(tensor) for _ in range(_c10d.get_world_size(group=group))]
        _coll.all_gather(outs, tensor, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        # rank i's gradient is the sum over ranks j of rank j's grad_outputs[i]: an all_to_all, then a sum
        gxs = _AlltoAll.apply(ctx.group, [_creation.empty_like(g) for g in grad_outputs], *grad_outputs)
        return None, _reduction.sum(_shape.stack(gxs), dim=0)


class _AlltoAll(Function):
    @staticmethod
    def forward(ctx, group, out_tensor_list, *tensors):
        ctx.group = group
        ctx.input_sizes = [tensors[i].size() for i in range(_c10d.get_world_size(group=group))]
        _coll.all_to_all(out_tensor_list, [t.contiguous() for t in tensors], group=group)
        return tuple(out_tensor_list)

    @staticmethod
    def backward(ctx, *grad_outputs):
        g0 = grad_outputs[0]
        outs = [_creation.empty(size, dtype=g0.dtype, device=g0.device) for size in ctx.input_sizes]
        return (None, None) + _AlltoAll.apply(ctx.group, outs, *grad_outputs)


class _AlltoAllSingle(Function):
    @staticmethod
    def forward(ctx, group, output, output_split_sizes, input_split_sizes, input):
        ctx.group, ctx.input_size = group, input.size()
        ctx.output_split_sizes, ctx.input_split_sizes = input_split_sizes, output_split_sizes
        _more.all_to_all_single(output, input, output_split_sizes=output_split_sizes,
                                input_split_sizes=input_split_sizes, group=group)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        out = _creation.empty(ctx.input_size, dtype=grad_output.dtype, device=grad_output.device)
        return (None, None, None, None, _AlltoAllSingle.apply(ctx.group, out, ctx.output_split_sizes,
                                                              ctx.input_split_sizes, grad_output.contiguous()))


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.group, ctx.op = group, op
        out = tensor.clone().contiguous()
        _coll.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad_output)
