"""torch.* names added together: the symbolic-shape helpers (sym_*, SymInt / SymFloat / SymBool), the dtypes
glassgrad has no tensors of (sub-byte, bits, float4, complex32, quantized), compiled_with_cxx11_abi /
get_file_path / prepare_multiprocessing_environment / classproperty / thread_safe_generator, hash_tensor,
torch.mps, Tensor.record_stream and the dense Tensor.smm / sspaddmm errors -- against torch."""
import math
import os
import pickle

import numpy as np
import pytest
import torch

import glassgrad as gg


def outcome(fn, lib):
    """(type name, value repr) of fn(lib), or ('!' + exception type, message)."""
    try:
        r = fn(lib)
    except Exception as e:          # noqa: BLE001  (the error is what is compared)
        return "!" + type(e).__name__, str(e).replace("glassgrad._tensor.", "torch.")   # (class names)
    return type(r).__name__, repr(r)


def same(fn, message_prefix=None):
    t, g = outcome(fn, torch), outcome(fn, gg)
    if message_prefix is not None and t[0].startswith("!"):      # compare only the start of a long message
        t, g = (t[0], t[1][:message_prefix]), (g[0], g[1][:message_prefix])
    assert g == t


# -- sym_* --------------------------------------------------------------------------------------------------
_NUMS = [3, 3.7, -3.7, True, False, 0, "a", None, math.inf, math.nan, 2 ** 70, 3.0, np.int64(4), np.float32(2.5)]


@pytest.mark.parametrize("fn", ["sym_int", "sym_float", "sym_not", "sym_sqrt"])
@pytest.mark.parametrize("i", range(len(_NUMS)))
def test_sym_unary_numbers(fn, i):
    same(lambda T: getattr(T, fn)(_NUMS[i]))


@pytest.mark.parametrize("fn", ["sym_int", "sym_float", "sym_not", "sym_sqrt"])
@pytest.mark.parametrize("make", [lambda T: T.tensor(2.5), lambda T: T.tensor(3), lambda T: T.tensor(True),
                                  lambda T: T.tensor([4.0]), lambda T: T.tensor([1.0, 2.0])])
def test_sym_unary_tensors(fn, make):
    same(lambda T: getattr(T, fn)(make(T)))


_PAIRS = [(1, 2), (2.0, 1), (1, 2.5), (True, 0), (True, False), (2, True), (True, 2.0), (math.nan, 1), (1, math.nan),
          ("a", "b"), (np.int64(3), 2), (np.float32(3), 2), (np.int32(3), np.int64(5)), (-0.0, 0)]


@pytest.mark.parametrize("fn", ["sym_max", "sym_min"])
@pytest.mark.parametrize("i", range(len(_PAIRS)))
def test_sym_max_min(fn, i):
    same(lambda T: getattr(T, fn)(*_PAIRS[i]))


@pytest.mark.parametrize("fn", ["sym_max", "sym_min"])
def test_sym_max_min_tensor_refused(fn):
    same(lambda T: getattr(T, fn)(T.tensor(1), 2))
    same(lambda T: getattr(T, fn)(2, T.tensor(1.5)))


@pytest.mark.parametrize("args", [([1, 2, 3],), ([1, 2.5],), ([],), ((True, True),), ("ab",), (5,), ([[1], [2]],),
                                  (1, 2, 3), (1, 2.5), ()])
def test_sym_sum(args):
    same(lambda T: T.sym_sum(*args))


def test_sym_sum_tensors():
    for T in (torch, gg):
        r = T.sym_sum([T.tensor(1), 2])
        assert isinstance(r, T.Tensor) and r.item() == 3 and r.dtype == T.int64


@pytest.mark.parametrize("c", [True, False, 1, 0, "x", None])
@pytest.mark.parametrize("tf", [(1, 2), (1, 2.0), (1, True), ("a", "b")])
def test_sym_ite(c, tf):
    same(lambda T: T.sym_ite(c, *tf))


def test_sym_ite_tensor_condition_refused():
    same(lambda T: T.sym_ite(T.tensor(True), 1, 2))


@pytest.mark.parametrize("v", [3, 3.5, True, 2 ** 70, "a"])
def test_sym_fresh_size(v):
    same(lambda T: T.sym_fresh_size(v))


def test_sym_fresh_size_tensor():
    assert gg.sym_fresh_size(gg.tensor(3)) == torch.sym_fresh_size(torch.tensor(3)) == 3


_RANGE_CASES = [((3,), {}), ((3,), dict(min=4, max=5)), ((3,), dict(max=2)), ((3,), dict(min=4)),
                ((3.5,), dict(min=0)), ((3.5,), dict(min=4)), ((-3.5,), {}), (("a",), {}), ((None,), {}),
                ((3,), dict(min=0.5)), ((3,), dict(min=-2)), ((1,), dict(min=-2)), ((0,), {}), ((-1,), {}),
                ((3,), dict(min=5, max=2)), ((3,), dict(min=5, max=3)), ((3,), dict(min=3, max=3)), ((True,), {}),
                ((2 ** 70,), {}), ((3,), dict(max=2 ** 70)), ((3,), dict(min=None, max=None)), ((5,), dict(max=-1)),
                ((3,), dict(min=math.nan)), ((math.nan,), {}), ((math.inf,), {}), ((1 + 2j,), {}),
                ((np.int64(3),), {}), ((np.float32(2.5),), dict(min=0)), ((3,), dict(min=True)),
                ((3,), dict(min=np.int64(1))), ((3,), dict(max=3.0)), ((3, 0, 5), {}), ((3,), dict(foo=1)),
                ((-2,), dict(min=-5))]


@pytest.mark.parametrize("fn", ["sym_constrain_range", "sym_constrain_range_for_size"])
@pytest.mark.parametrize("i", range(len(_RANGE_CASES)))
def test_sym_constrain_range(fn, i):
    args, kw = _RANGE_CASES[i]
    same(lambda T: getattr(T, fn)(*args, **kw))


@pytest.mark.parametrize("fn", ["sym_constrain_range", "sym_constrain_range_for_size"])
@pytest.mark.parametrize("make", [lambda T: T.tensor(-3), lambda T: T.tensor(3), lambda T: T.tensor(2.5),
                                  lambda T: T.tensor([1, 2]), lambda T: T.tensor(3.0, requires_grad=True)])
@pytest.mark.parametrize("kw", [{}, dict(min=4), dict(max=5)])
def test_sym_constrain_range_tensors(fn, make, kw):
    same(lambda T: getattr(T, fn)(make(T), **kw))


def test_sym_constrain_range_tensor_bound():
    same(lambda T: T.sym_constrain_range(3, min=T.tensor(1)))
    same(lambda T: T.sym_constrain_range(3, min=T.tensor(4)))


def test_sym_constrain_range_missing_size():
    for T in (torch, gg):
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            T.sym_constrain_range()


def test_sym_types_are_no_plain_numbers():
    for name, v in (("SymInt", 3), ("SymFloat", 3.0), ("SymBool", True)):
        assert isinstance(getattr(gg, name), type) and not isinstance(v, getattr(gg, name))
        assert isinstance(v, getattr(torch, name)) is False
    assert gg.SymBool.__mro__[1:] == (object,) and torch.SymBool.__mro__[1:] == (object,)


def test_sym_types_wrap_a_node():
    class Node:
        def int_(self):
            return 5

        def bool_(self):
            return False

    for T in (torch, gg):
        n = Node()
        s = T.SymInt(n)
        assert s.node is n and int(s) == 5 and list(range(s)) == list(range(5))
        assert bool(T.SymBool(n)) is False and int(T.SymBool(n)) == 0 and T.SymFloat(n).node is n
        assert T.sym_int(s) is s and T.sym_float(T.SymFloat(n)).node is n


# -- dtypes -------------------------------------------------------------------------------------------------
NEW_DTYPES = ([f"uint{i}" for i in range(1, 8)] + [f"int{i}" for i in range(1, 8)]
              + ["bits1x8", "bits2x4", "bits4x2", "bits8", "bits16", "float4_e2m1fn_x2", "complex32", "chalf",
                 "qint8", "quint8", "qint32", "quint4x2", "quint2x4"])
OLD_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "uint16", "uint64", "float16", "bfloat16", "float32",
              "float64", "complex64", "complex128", "float8_e4m3fn"]


@pytest.mark.parametrize("name", NEW_DTYPES)
def test_dtype_object(name):
    d, t = getattr(gg, name), getattr(torch, name)
    assert isinstance(d, gg.dtype) and type(d) is gg.dtype
    assert repr(d) == repr(t) and str(d) == str(t)
    assert d.itemsize == t.itemsize
    assert d.is_floating_point == t.is_floating_point and d.is_complex == t.is_complex
    same(lambda T: getattr(T, name).is_signed)
    same(lambda T: getattr(T, name).to_real())
    same(lambda T: getattr(T, name).to_complex())
    assert pickle.loads(pickle.dumps(d)) is d


@pytest.mark.parametrize("name", NEW_DTYPES)
def test_dtype_info_and_default(name):
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        same(lambda T: getattr(T.finfo(getattr(T, name)), attr))
    same(lambda T: repr(T.finfo(getattr(T, name))))
    for attr in ("bits", "max", "min", "dtype"):
        same(lambda T: getattr(T.iinfo(getattr(T, name)), attr))
    same(lambda T: repr(T.iinfo(getattr(T, name))))
    same(lambda T: T.set_default_dtype(getattr(T, name)))
    assert gg.get_default_dtype() is gg.float32


def test_chalf_is_complex32_and_half_complex():
    assert gg.chalf is gg.complex32 and gg.bit is gg.uint1 and torch.bit is torch.uint1
    same(lambda T: T.float16.to_complex())
    same(lambda T: T.bfloat16.to_complex())
    same(lambda T: T.complex32.to_real())


@pytest.mark.parametrize("a", NEW_DTYPES)
@pytest.mark.parametrize("b", OLD_DTYPES + NEW_DTYPES)
def test_promote_types_and_can_cast(a, b):
    same(lambda T: T.promote_types(getattr(T, a), getattr(T, b)), message_prefix=60)
    same(lambda T: T.promote_types(getattr(T, b), getattr(T, a)), message_prefix=60)
    same(lambda T: T.can_cast(getattr(T, a), getattr(T, b)))
    same(lambda T: T.can_cast(getattr(T, b), getattr(T, a)))


@pytest.mark.parametrize("a", OLD_DTYPES)
@pytest.mark.parametrize("b", OLD_DTYPES)
def test_can_cast_existing_dtypes_unchanged(a, b):
    same(lambda T: T.can_cast(getattr(T, a), getattr(T, b)))


@pytest.mark.parametrize("name", ["uint4", "int4", "bits8", "float4_e2m1fn_x2", "qint8", "complex32"])
def test_no_tensors_of_these_dtypes(name):
    """glassgrad has no tensors of them: creating one raises (torch makes some of them), never a wrong tensor."""
    with pytest.raises(TypeError, match=f"no tensors of dtype torch.{name}"):
        gg.zeros(2, dtype=getattr(gg, name))
    with pytest.raises(TypeError, match=f"no tensors of dtype torch.{name}"):
        gg.ones(2).to(getattr(gg, name))


# -- small names --------------------------------------------------------------------------------------------
def test_small_names():
    assert gg.compiled_with_cxx11_abi() is torch.compiled_with_cxx11_abi() is True
    assert gg.prepare_multiprocessing_environment("x") is torch.prepare_multiprocessing_environment("x") is None
    assert gg.thread_safe_generator() is torch.thread_safe_generator() is None
    root = os.path.dirname(os.path.dirname(gg.__file__))
    assert gg.get_file_path("a", "b") == os.path.join(root, "a", "b")
    assert torch.get_file_path("a", "b") == os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "a", "b")
    assert gg.get_file_path() == root


def test_classproperty():
    for T in (torch, gg):
        class A:
            calls = []

            @T.classproperty
            def name(cls):
                A.calls.append(cls)
                return cls.__name__

        class B(A):
            pass

        assert A.name == "A" and B.name == "B" and B().name == "B"
        assert A.calls == [A, B, B]

        class C:
            @T.classproperty
            @staticmethod
            def v():
                return 7

        assert C.v == 7 and C().v == 7


# -- hash_tensor --------------------------------------------------------------------------------------------
_HASH_DTYPES = ["int64", "int32", "int8", "uint8", "bool", "float16", "bfloat16", "float32", "float64", "complex64",
                "uint16", "uint64", "float8_e4m3fn"]


def _data(dt, shape, seed):
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.random(shape) > 0.5
    v = rng.standard_normal(shape) * 100
    return np.abs(v) if dt.startswith("u") else v


@pytest.mark.parametrize("dt", _HASH_DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (5,), (), (0, 3), (2, 3, 2)])
@pytest.mark.parametrize("args", [(), (0,), (-1,), ([0, 1],), ((0, 2),), ([],)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_hash_tensor(dt, shape, args, keepdim):
    a = _data(dt, shape, 7)

    def f(T):
        r = T.hash_tensor(T.from_numpy(np.array(a)).to(getattr(T, dt)), *args, keepdim=keepdim)
        return r.dtype, tuple(r.shape), r.tolist()
    same(f)


def test_hash_tensor_special_values_and_layouts():
    vals = [math.nan, -math.nan, -0.0, math.inf, -math.inf, 1e-300, 2.5]
    same(lambda T: T.hash_tensor(T.tensor(vals, dtype=T.float64)).item())
    same(lambda T: T.hash_tensor(T.tensor(vals, dtype=T.float32)).item())
    same(lambda T: T.hash_tensor(T.tensor([2 ** 63 - 1, -5])).item())
    same(lambda T: T.hash_tensor(T.arange(12.).reshape(3, 4).t(), 0).tolist())
    same(lambda T: T.hash_tensor(T.arange(12.).reshape(3, 4)[:, ::2], 1).tolist())
    same(lambda T: T.arange(6).reshape(2, 3).hash_tensor(1, keepdim=True).tolist())
    same(lambda T: T.arange(6.).hash_tensor().item())


def test_hash_tensor_out_and_no_grad():
    for T in (torch, gg):
        o = T.empty(0, dtype=T.uint64)
        T.hash_tensor(T.ones(3), out=o)
        assert o.tolist() == 4607182418800017408
        r = T.hash_tensor(T.ones(3, requires_grad=True))
        assert r.requires_grad is False and r.grad_fn is None


@pytest.mark.parametrize("call", [
    lambda T: T.hash_tensor(T.ones(2), mode=1), lambda T: T.hash_tensor(T.ones(2), mode=1.0),
    lambda T: T.hash_tensor(T.ones(2), "0"), lambda T: T.hash_tensor(T.ones(2), [0.5]),
    lambda T: T.hash_tensor([1, 2]), lambda T: T.hash_tensor(T.ones(2, 3), 2),
    lambda T: T.hash_tensor(T.ones(2, 3), [0, 0]), lambda T: T.hash_tensor(T.zeros(0, 3)),
    lambda T: T.hash_tensor(T.zeros(0, 3), -2), lambda T: T.hash_tensor(T.zeros(0, 3), [0, 1]),
    lambda T: T.hash_tensor(T.zeros(0, 3, dtype=T.complex64), mode=1),
    lambda T: T.hash_tensor(T.ones(2, dtype=T.complex64), mode=1),
    lambda T: T.hash_tensor(T.ones(2, dtype=T.complex64), 3),
])
def test_hash_tensor_errors(call):
    same(call)


# -- torch.mps ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda T: T.mps.device_count(), lambda T: T.mps.is_available(), lambda T: T.mps.synchronize(),
    lambda T: T.mps.get_rng_state(), lambda T: T.mps.get_rng_state(0), lambda T: T.mps.seed(),
    lambda T: T.mps.manual_seed(3), lambda T: T.mps.set_rng_state(T.zeros(3, dtype=T.uint8)),
    lambda T: T.mps.set_rng_state(5), lambda T: T.mps.empty_cache(),
    lambda T: T.mps.set_per_process_memory_fraction(0.5), lambda T: T.mps.set_per_process_memory_fraction(3.0),
    lambda T: T.mps.set_per_process_memory_fraction(1), lambda T: T.mps.current_allocated_memory(),
    lambda T: T.mps.driver_allocated_memory(), lambda T: T.mps.recommended_max_memory(),
    lambda T: T.mps.compile_shader("kernel void f(){}"), lambda T: T.mps.load_metallib(b"x"),
    lambda T: T.mps.load_metallib("x.metallib"), lambda T: T.mps.load_metallib(5),
    lambda T: T.mps.profiler.start(), lambda T: T.mps.profiler.stop(),
])
def test_mps(call):
    same(call)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")     # (torch's Event.__del__)
def test_mps_event_and_profile():
    for T in (torch, gg):
        with pytest.raises(RuntimeError, match=r"Cannot execute acquireEvent\(\) without MPS backend."):
            T.mps.Event(enable_timing=True)
        with pytest.raises(RuntimeError, match=r"Cannot execute profilerStopTrace\(\) without MPS backend."):
            with T.mps.profiler.profile():
                pass
    assert set(gg.mps.__all__) == set(torch.mps.__all__)


# -- Tensor.record_stream, dense smm / sspaddmm -------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda T: T.ones(2).record_stream(T.Stream()), lambda T: T.ones(2).record_stream(None),
    lambda T: T.ones(2).record_stream(1), lambda T: T.ones(2).record_stream(T.cpu.current_stream()),
    lambda T: T.ones(2, 2).to_sparse().record_stream(T.Stream()),
    lambda T: T.ones(2, 2).smm(T.ones(2, 2)), lambda T: T.ones(2, 2).sspaddmm(T.ones(2, 2), T.ones(2, 2)),
    lambda T: T.sspaddmm(T.ones(2, 2), T.ones(2, 2), T.ones(2, 2)),
    lambda T: T.sspaddmm(T.ones(2, 2), T.ones(2, 2).to_sparse(), T.ones(2, 2)),
    lambda T: T.ones(2, 2).to_sparse().sspaddmm(T.ones(2, 2), T.ones(2, 2)),
    lambda T: T.ones(2, 2).to_sparse().smm(T.ones(2, 2)).to_dense(),
])
def test_record_stream_and_sparse_products(call):
    same(call, message_prefix=120)


@pytest.mark.parametrize("call", [
    lambda T, o: T.sym_int(o), lambda T, o: T.sym_float(o), lambda T, o: T.sym_not(o), lambda T, o: T.sym_sqrt(o),
    lambda T, o: T.sym_max(1, o), lambda T, o: T.sym_min(o, 2), lambda T, o: T.sym_sum([1, o]),
    lambda T, o: T.sym_sum(o, 2), lambda T, o: T.sym_ite(True, o, o)])
def test_sym_helpers_dispatch_torch_function(call):
    class Obj:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func.__name__, len(args), [type(a).__name__ for a in args]

    assert call(gg, Obj()) == call(torch, Obj())
