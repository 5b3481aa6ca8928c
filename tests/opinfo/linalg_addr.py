"""Op table rows: addr and the in-place forms of the added products (ops/addmm.py)."""
from .core import OpInfo
from .linalg import _S, _E, _d

OPS = [
    OpInfo("addr", lambda T, c, a, b: T.addr(c, a, b), _S(((3, 4), (3,), (4,)), ((4,), (3,), (4,)), ((), (2,), (3,)),
                                                          ((3, 0), (3,), (0,))),
           errors=_E((_d((3, 4), (3, 2), (4,)), RuntimeError, "addr: Expected 1-D argument vec1, but got 2-D"),
                     (_d((3, 4), (3,), ()), RuntimeError, "addr: Expected 1-D argument vec2, but got 0-D"),
                     (_d((3, 4), (2,), (4,)), RuntimeError, "The expanded size of the tensor (2) must match the "
                                                            "existing size (3) at non-singleton dimension 0."))),
    OpInfo("addr_beta_alpha", lambda T, c, a, b: T.addr(c, a, b, beta=0.5, alpha=-2.0), _S(((3, 4), (3,), (4,)))),
    OpInfo("addr_beta0", lambda T, c, a, b: T.addr(c, a, b, beta=0, alpha=1.5), _S(((3, 4), (3,), (4,)))),
    OpInfo("addr_int", lambda T, c, a, b: T.addr(c, a, b, beta=2, alpha=3), _S(((3, 4), (3,), (4,))),
           dtypes=("int64",), differentiable=False),
    OpInfo("addr_int_errors", lambda T, c, a, b: T.addr(c, a, b, alpha=2.5), lambda rng, dt: [],
           errors=_E((_d((3, 4), (3,), (4,), dt="int64"), RuntimeError,
                      "For integral input tensors, argument alpha must not be a floating point number."))),
    OpInfo("addr_bool", lambda T, c, a, b: T.addr(c > 0, a > 0, b > 0), _S(((3, 4), (3,), (4,))),
           differentiable=False),
    OpInfo("addr_mixed", lambda T, c, a, b: T.addr(c, a.float(), b), _S(((3, 4), (3,), (4,))), dtypes=("float64",),
           differentiable=False),
    OpInfo("Tensor.addr", lambda T, c, a, b: c.addr(a, b, alpha=2), _S(((3, 4), (3,), (4,)))),
    OpInfo("Tensor.addr_", lambda T, c, a, b: (c * 1).addr_(a, b, beta=0.5),
           _S(((3, 4), (3,), (4,))),
           errors=_E((_d((4,), (3,), (4,)), RuntimeError, "2D tensor expected, got 1D tensor for input"))),
    OpInfo("Tensor.addmv_", lambda T, c, a, b: (c * 1).addmv_(a, b, alpha=2), _S(((2,), (2, 3), (3,))),
           errors=_E((_d((1,), (3, 5), (5,)), RuntimeError,
                      "Bad in-place call: input tensor size [1] and output tensor size [3] should match"))),
    OpInfo("Tensor.baddbmm_", lambda T, c, a, b: (c * 1).baddbmm_(a, b, beta=0.5),
           _S(((2, 3, 5), (2, 3, 4), (2, 4, 5))),
           errors=_E((_d((3, 5), (2, 3, 4), (2, 4, 5)), RuntimeError,
                      "Bad in-place call: input tensor size [3, 5] and output tensor size [2, 3, 5] should match"))),
    OpInfo("Tensor.addbmm_", lambda T, c, a, b: (c * 1).addbmm_(a, b, alpha=-1), _S(((3, 5), (2, 3, 4), (2, 4, 5)))),
]
