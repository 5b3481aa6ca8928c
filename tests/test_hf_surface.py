"""The torch surface HuggingFace transformers touches when it imports and runs a model (found by running tiny
GPT-2 / Llama / BERT models through it on glassgrad), exercised the way transformers uses it, against torch.
None of these tests needs transformers."""
import collections
import copy
import pickle

import pytest
import torch
import torch.utils._pytree as tpt
from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as TorchTGI

import glassgrad
import glassgrad.utils._pytree as gpt
from glassgrad._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as GlassTGI


# -- torch.utils._pytree: the named node functions (transformers' ModelOutput registration) ---------------------

def _output_class(pt, name):
    """A ModelOutput-like OrderedDict subclass registered as transformers registers its outputs."""
    cls = type(name, (collections.OrderedDict,), {})
    pt.register_pytree_node(cls, lambda d: (list(d.values()), list(d.keys())),
                            lambda values, context: cls(zip(context, values)),
                            serialized_type_name=f"tests.{name}", flatten_with_keys_fn=pt._dict_flatten_with_keys)
    return cls


@pytest.mark.parametrize("fn", ["_dict_flatten", "_dict_flatten_with_keys", "_list_flatten",
                                "_list_flatten_with_keys", "_tuple_flatten", "_tuple_flatten_with_keys"])
def test_pytree_named_flatten_functions(fn):
    arg = {"a": 1, "b": [2, 3]} if fn.startswith("_dict") else ([1, 2] if fn.startswith("_list") else (1, 2))
    want, got = getattr(tpt, fn)(arg), getattr(gpt, fn)(arg)
    assert repr(got) == repr(want)


@pytest.mark.parametrize("fn,values,context", [("_dict_unflatten", [1, 2], ["a", "b"]),
                                               ("_list_unflatten", [1, 2], None), ("_tuple_unflatten", [1, 2], None)])
def test_pytree_named_unflatten_functions(fn, values, context):
    assert getattr(gpt, fn)(values, context) == getattr(tpt, fn)(values, context)


def test_pytree_model_output_registration_paths():
    tout, gout = _output_class(tpt, "TOutHF"), _output_class(gpt, "GOutHF")
    tpaths, tspec = tpt.tree_flatten_with_path(tout(loss=torch.tensor(1.0), logits=[torch.ones(2), 3]))
    gpaths, gspec = gpt.tree_flatten_with_path(gout(loss=glassgrad.tensor(1.0), logits=[glassgrad.ones(2), 3]))
    assert [tpt.keystr(p) for p, _ in tpaths] == [gpt.keystr(p) for p, _ in gpaths] == ["['loss']", "['logits'][0]",
                                                                                      "['logits'][1]"]
    back = gpt.tree_unflatten([v for _, v in gpaths], gspec)
    assert type(back) is gout and list(back) == ["loss", "logits"]


# -- torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex ---------------------------------------

_TGI_INDICES = [0, True, [0, 1], (1, 2), (-1,), None, (slice(None), 1), "tensor", "tensor_pair", "list_tensor"]


def _index(lib, kind):
    return {"tensor": lambda: lib.tensor(1), "tensor_pair": lambda: (1, lib.tensor(2)),
            "list_tensor": lambda: (lib.tensor([0, 0, 2]), 1)}.get(kind, lambda: kind)() if isinstance(kind, str) \
        else kind


@pytest.mark.parametrize("kind", _TGI_INDICES, ids=repr)
def test_transform_getitem_to_index(kind):
    out = []
    for lib, mode in ((torch, TorchTGI), (glassgrad, GlassTGI)):
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        with mode():
            y = x[_index(lib, kind)]
        y.sum().backward()
        out.append((tuple(y.shape), y.grad_fn.name(), y._is_view(), y.tolist(), x.grad.tolist()))
    assert out[1] == out[0]


def test_transform_getitem_to_index_empty_and_restored():
    for mode, lib in ((TorchTGI, torch), (GlassTGI, glassgrad)):
        x = lib.arange(6.0).reshape(2, 3)
        with mode(), pytest.raises(IndexError, match="at least one index must be provided"):
            x[()]
        y = x[lib.tensor(1)]                  # outside the mode: a 0-d integer tensor selects (a view)
        assert y._is_view() and y.tolist() == [3.0, 4.0, 5.0]


# -- indexing by a 0-d integer tensor: torch reads it as an int (select, a view) -------------------------------

@pytest.mark.parametrize("kind", ["i", "i32", "pair", "lead", "ellipsis", "none", "neg", "with_list"])
def test_zero_dim_integer_tensor_index_selects(kind):
    out = []
    for lib in (torch, glassgrad):
        i = lib.tensor(1)
        idx = {"i": i, "i32": lib.tensor(1, dtype=lib.int32), "pair": (1, i), "lead": (i, slice(None), 2),
               "ellipsis": (Ellipsis, i), "none": (None, i), "neg": lib.tensor(-1),
               "with_list": (i, lib.tensor([0, 2]))}[kind]
        x = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
        y = x[idx]
        out.append((tuple(y.shape), y.grad_fn.name(), y._is_view(), y.stride(), y.tolist()))
    assert out[1] == out[0]


def test_zero_dim_integer_tensor_index_writes_through_and_checks_bounds():
    for lib in (torch, glassgrad):
        x = lib.zeros(2, 3)
        x[lib.tensor(1)].add_(1.0)
        assert x.tolist() == [[0.0] * 3, [1.0] * 3]
        with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
            x[lib.tensor(5)]


# -- torch.cuda.CUDAGraph / graph / graph_pool_handle: torch's CPU-build errors ----------------------------------

def test_cuda_graph_names_cpu_build():
    assert glassgrad.cuda.graphs.CUDAGraph is glassgrad.cuda.CUDAGraph
    for name, call in (("CUDAGraph", lambda m: m.CUDAGraph()), ("graph_pool_handle", lambda m: m.graph_pool_handle()),
                       ("graph", lambda m: m.graph(None))):
        with pytest.raises(RuntimeError) as want:
            call(torch.cuda)
        with pytest.raises(RuntimeError) as got:
            call(glassgrad.cuda)
        assert str(got.value) == str(want.value), name
    assert isinstance(glassgrad.cuda.CUDAGraph | None, type(torch.cuda.CUDAGraph | None))   # annotations work


# -- torch.memory_format ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["contiguous_format", "preserve_format", "channels_last", "channels_last_3d"])
def test_memory_format_objects(name):
    want, got = getattr(torch, name), getattr(glassgrad, name)
    assert isinstance(got, glassgrad.memory_format) and repr(got) == repr(want) and str(got) == str(want)
    assert pickle.loads(pickle.dumps(got)) is got and copy.deepcopy(got) is got and copy.copy(got) is got
    assert got == got and hash(got) == hash(got) and got != glassgrad.strided


def test_memory_format_type():
    assert glassgrad.memory_format.__name__ == torch.memory_format.__name__ == "memory_format"
    assert glassgrad.memory_format.__module__ == torch.memory_format.__module__ == "torch"
    for lib in (torch, glassgrad):
        with pytest.raises(TypeError, match="cannot create 'torch.memory_format' instances"):
            lib.memory_format()


def test_clone_with_contiguous_format_as_generate_does():
    t, g = torch.tensor([[1, 5, 9]]), glassgrad.tensor([[1, 5, 9]])
    tc, gc = t.clone(memory_format=torch.contiguous_format), g.clone(memory_format=glassgrad.contiguous_format)
    assert gc.tolist() == tc.tolist() and gc.stride() == tc.stride() and gc.data_ptr() != g.data_ptr()


# -- expand: torch's strides; writable when no two elements share memory (BERT's position_ids buffer) --------------

@pytest.mark.parametrize("shape,sizes", [((), (1,)), ((), (1, 1)), ((), (2, 1)), ((3,), (1, 3)), ((3,), (1, 1, 3)),
                                         ((3,), (2, 1, 3)), ((3,), (1, 2, 3)), ((3, 1), (1, 3, 1)),
                                         ((3, 1), (1, 3, 5)), ((3, 1), (2, 3, 4)), ((10,), (1, -1))])
def test_expand_strides(shape, sizes):
    tx, gx = torch.zeros(shape), glassgrad.zeros(shape)
    assert gx.expand(*sizes).stride() == tx.expand(*sizes).stride()
    tt, gt = torch.randn(2, 3).t(), glassgrad.randn(2, 3).t()
    assert gt.expand(1, 3, 2).stride() == tt.expand(1, 3, 2).stride()


def test_expand_of_new_unit_dim_is_writable():
    for lib in (torch, glassgrad):
        buf = lib.arange(10).expand((1, -1))
        buf.copy_(lib.arange(10).expand((1, -1)) * 2)
        assert buf.tolist() == [list(range(0, 20, 2))]
        shared = lib.zeros(3, 1).expand(3, 4)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
            shared.copy_(lib.ones(3, 4))


# -- NumPy-style keywords: axis / keepdims (torch's C-bound functions and methods) ---------------------------------

_NUMPY_CALLS = {
    "torch.all": lambda m, x, b: m.all(b, axis=-1, keepdims=True), "Tensor.all": lambda m, x, b: b.all(axis=1),
    "torch.any": lambda m, x, b: m.any(b, axis=0, keepdims=True), "Tensor.any": lambda m, x, b: b.any(axis=1),
    "torch.sum": lambda m, x, b: m.sum(x, axis=1, keepdims=True), "Tensor.sum": lambda m, x, b: x.sum(axis=(0, 1)),
    "torch.mean": lambda m, x, b: m.mean(x, axis=0), "Tensor.mean": lambda m, x, b: x.mean(axis=1, keepdims=True),
    "torch.std": lambda m, x, b: m.std(x, axis=0), "Tensor.max": lambda m, x, b: x.max(axis=1, keepdims=True)[0],
    "torch.amax": lambda m, x, b: m.amax(x, axis=(0, 1), keepdims=True),
    "torch.repeat_interleave": lambda m, x, b: m.repeat_interleave(x, 2, axis=-2),
    "torch.cumsum": lambda m, x, b: m.cumsum(x, axis=1), "torch.argmax": lambda m, x, b: m.argmax(x, axis=1),
    "torch.cat": lambda m, x, b: m.cat([x, x], axis=1), "torch.stack": lambda m, x, b: m.stack([x, x], axis=1),
    "torch.squeeze": lambda m, x, b: m.squeeze(x[None], axis=0), "torch.chunk": lambda m, x, b: m.chunk(x, 2, axis=1)[1],
    "torch.min": lambda m, x, b: m.min(x, axis=0, keepdims=True)[0],
    "torch.index_select": lambda m, x, b: m.index_select(x, axis=1, index=m.tensor([0])),
    "torch.sum_axis_none": lambda m, x, b: m.sum(x, axis=None),
}


@pytest.mark.parametrize("name", sorted(_NUMPY_CALLS))
def test_numpy_keyword_spellings(name):
    outs = []
    for lib in (torch, glassgrad):
        x = lib.arange(6.0).reshape(2, 3)
        outs.append(_NUMPY_CALLS[name](lib, x, x > 2))
    assert outs[1].tolist() == outs[0].tolist() and outs[1].dtype.__repr__() == outs[0].dtype.__repr__()


@pytest.mark.parametrize("call", [lambda m, x: m.sum(x, dim=1, axis=1), lambda m, x: x.sum(1, axis=1),
                                  lambda m, x: m.split(x, 1, axis=0), lambda m, x: x.split(1, axis=0),
                                  lambda m, x: m.norm(x, axis=1), lambda m, x: x.norm(axis=1),
                                  lambda m, x: x.unique(axis=0), lambda m, x: m.nn.functional.softmax(x, axis=1)],
                         ids=["dim_and_axis", "method_dim_and_axis", "split", "method_split", "norm", "method_norm",
                              "method_unique", "F.softmax"])
def test_numpy_keywords_not_where_torch_has_none(call):
    for lib in (torch, glassgrad):
        with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
            call(lib, lib.ones(2, 3))


# -- `with torch.device(d):` (transformers' from_pretrained enters torch.device("meta")) ---------------------------

def test_device_as_context_manager():
    seen = []
    for lib in (torch, glassgrad):
        with lib.device("cpu") as d:
            inside = (str(d), str(lib.get_default_device()), str(lib.zeros(1).device))
        seen.append((inside, str(lib.get_default_device())))
        lib.set_default_device(None)
    assert seen[1] == seen[0] == (("cpu", "cpu", "cpu"), "cpu")


def test_device_context_nests_and_restores():
    seen = []
    for lib in (torch, glassgrad):
        got = []
        with lib.device("meta"):
            got.append(str(lib.get_default_device()))
            with lib.device("cpu"):
                got.append(str(lib.get_default_device()))
            got.append(str(lib.get_default_device()))
        got.append(str(lib.get_default_device()))
        lib.set_default_device(None)
        seen.append(got)
    assert seen[1] == seen[0] == ["meta", "cpu", "meta", "cpu"]


def test_device_context_restores_on_error():
    with pytest.raises(ValueError), glassgrad.device("meta"):
        raise ValueError
    assert str(glassgrad.get_default_device()) == "cpu"


# -- accelerate (transformers' Trainer): torch._dynamo.eval_frame, RandomSampler._num_samples -------------------------

def test_dynamo_eval_frame_reachable_as_attribute():
    import glassgrad._dynamo as gd
    import torch._dynamo as td
    module = glassgrad.nn.Linear(2, 2)
    for dyn, lib, m in ((td, torch, torch.nn.Linear(2, 2)), (gd, glassgrad, module)):
        assert not isinstance(m, dyn.eval_frame.OptimizedModule)
        assert isinstance(lib.compile(m), dyn.eval_frame.OptimizedModule)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_submodule'"):
        gd.no_such_submodule


@pytest.mark.parametrize("num_samples", [None, 3])
def test_random_sampler_num_samples_attribute(num_samples):
    ts = torch.utils.data.RandomSampler(range(5), num_samples=num_samples)
    gs = glassgrad.utils.data.RandomSampler(range(5), num_samples=num_samples)
    assert gs._num_samples == ts._num_samples and gs.num_samples == ts.num_samples and len(gs) == len(ts)
