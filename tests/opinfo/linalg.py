"""Op table rows: linear algebra (ops/linalg.py, ops/addmm.py, ops/einsum.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, noncontig, NoGrad

F64 = np.float64
F32 = np.float32


def _S(*shapes, names=None, nc=()):
    """samples(rng, dt) making one Sample per tuple of shapes; indices in `nc` are made non-contiguous."""
    def gen(rng, dt):
        out = []
        for k, shp in enumerate(shapes):
            args = []
            for j, s in enumerate(shp):
                a = arr(rng, s, dt)
                if (k, j) in nc:
                    a = noncontig(a)
                args.append(a)
            out.append(Sample(*args, name=(names[k] if names else f"s{k}")))
        return out
    return gen


def _E(*pairs):
    return lambda: [ErrorSample(Sample(*[np.zeros(s, dt) for s, dt in args]), err, msg) for args, err, msg in pairs]


def _d(*shapes, dt=F64):
    return tuple((s, dt) for s in shapes)


MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((4, 3), (3,)), ((4, 3), (3, 5)), ((2, 4, 3), (3,)),
                 ((3,), (2, 3, 4)), ((2, 4, 3), (3, 5)), ((4, 3), (2, 3, 5)), ((2, 4, 3), (2, 3, 5)),
                 ((1, 4, 3), (2, 3, 5)), ((2, 1, 4, 3), (3, 3, 5)), ((2, 2, 4, 3), (2, 3, 5)),
                 ((1, 3), (2, 3, 5)), ((4, 3), (0, 3, 5)), ((0, 3), (3, 4)), ((4, 0), (0, 5)),
                 ((2, 4, 0), (0, 5)), ((4, 1), (2, 1, 3))]
MATMUL_NC = {(3, 0), (3, 1), (6, 0), (8, 1), (1, 1)}

OPS = [
    OpInfo("matmul", lambda T, a, b: T.matmul(a, b), _S(*MATMUL_SHAPES, nc=MATMUL_NC),
           errors=_E((_d((), (3,)), RuntimeError, "both arguments to matmul need to be at least 1D"),
                     (_d((3,), (4,)), RuntimeError, "inconsistent tensor size, expected tensor [3] and src [4]"),
                     (_d((2, 3), (4,)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
                     (_d((3,), (4, 2)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x2)"),
                     (_d((2, 3), (4, 2)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)"),
                     (_d((2, 2, 3), (4, 2)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x2)"),
                     (_d((2, 2, 3), (4,)), RuntimeError, "size mismatch, got input (4), mat (4x3), vec (4)"),
                     (_d((2, 2, 3), (2, 4, 4)), RuntimeError,
                      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."),
                     (_d((2, 2, 3), (3, 3, 4)), RuntimeError,
                      "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
                     (((((2, 3), F64), ((3, 4), F32))), RuntimeError,
                      "expected m1 and m2 to have the same dtype, but got: double != float"),
                     (((((3,), F64), ((3,), F32))), RuntimeError,
                      "dot : expected both vectors to have same dtype, but found Double and Float"),
                     (((((2, 3), F64), ((3,), F32))), RuntimeError,
                      "addmv input tensors must have the same dtype, but got Float, Double, and Float"),
                     (((((2, 2, 3), F64), ((2, 3, 4), F32))), RuntimeError,
                      "expected scalar type Double but found Float"),
                     (((((2, 3), np.int64), ((3, 4), F32))), RuntimeError,
                      "expected m1 and m2 to have the same dtype, but got: long int != float"),
                     (((((2, 3, 3), np.bool_), ((2, 3, 3), np.bool_))), NotImplementedError,
                      "\"bmm\" not implemented for 'Bool'"),
                     (((((2, 3), np.bool_), ((3, 3), np.bool_))), NotImplementedError,
                      "\"addmm_impl_cpu_\" not implemented for 'Bool'"))),
    OpInfo("matmul_int", lambda T, a, b: T.matmul(a, b), _S(((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (3,)),
                                                             ((2, 2, 3), (2, 3, 4)), ((3,), (2, 3, 4))),
           dtypes=("int64", "int32"), differentiable=False),
    OpInfo("matmul_nograd_a", lambda T, a, b: T.matmul(a, b),
           lambda rng, dt: [Sample(NoGrad(arr(rng, s1, dt)), arr(rng, s2, dt), name=str(s1))
                            for s1, s2 in [((4, 3), (2, 3, 5)), ((3,), (2, 3, 4)), ((1, 4, 3), (2, 3, 5))]]),
    OpInfo("Tensor.__matmul__", lambda T, a, b: a @ b, _S(((2, 3), (3, 4)), ((2, 4, 3), (3,)), ((3,), (3, 2)))),
    OpInfo("mm", lambda T, a, b: T.mm(a, b), _S(((2, 3), (3, 4)), ((0, 3), (3, 4)), ((2, 0), (0, 4)),
                                               ((4, 3), (3, 2)), nc={(3, 0), (3, 1)}),
           errors=_E((_d((3,), (3, 4)), RuntimeError, "self must be a matrix"),
                     (_d((2, 3), (3,)), RuntimeError, "mat2 must be a matrix"),
                     (_d((2, 3), (4, 5)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
                     (((((2, 3), np.int32), ((3, 4), np.int64))), RuntimeError,
                      "expected m1 and m2 to have the same dtype, but got: int != long int"),
                     (((((2, 3), np.bool_), ((3, 4), np.bool_))), NotImplementedError, "not implemented for 'Bool'"))),
    OpInfo("mm_int", lambda T, a, b: T.mm(a, b), _S(((2, 3), (3, 4))), dtypes=("int64", "int32"),
           differentiable=False),
    OpInfo("bmm", lambda T, a, b: T.bmm(a, b), _S(((2, 3, 4), (2, 4, 5)), ((0, 3, 4), (0, 4, 5)),
                                                 ((2, 3, 0), (2, 0, 5)), ((2, 4, 3), (2, 3, 2)), nc={(3, 0)}),
           errors=_E((_d((3, 4), (2, 4, 5)), RuntimeError, "batch1 must be a 3D tensor"),
                     (_d((2, 3, 4), (4, 5)), RuntimeError, "batch2 must be a 3D tensor"),
                     (_d((2, 3, 4), (3, 4, 5)), RuntimeError,
                      "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4]."),
                     (((((2, 3, 4), F64), ((2, 4, 5), F32))), RuntimeError,
                      "expected scalar type Double but found Float"))),
    OpInfo("mv", lambda T, a, b: T.mv(a, b), _S(((2, 3), (3,)), ((0, 3), (3,)), ((2, 0), (0,)), ((4, 3), (3,)),
                                               nc={(3, 0), (3, 1)}),
           errors=_E((_d((2, 3), (4,)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
                     (_d((3,), (3,)), RuntimeError, "vector + matrix @ vector expected, got 1, 1, 1"),
                     (_d((2, 3), (3, 1)), RuntimeError, "vector + matrix @ vector expected, got 1, 2, 2"),
                     (((((2, 3), F64), ((3,), F32))), RuntimeError,
                      "addmv input tensors must have the same dtype, but got Float, Double, and Float"))),
    OpInfo("dot", lambda T, a, b: T.dot(a, b), _S(((3,), (3,)), ((0,), (0,)), ((4,), (4,)), nc={(2, 0)}),
           errors=_E((_d((3,), (4,)), RuntimeError,
                      "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
                      "elements, but got 3 and 4 elements respectively"),
                     (_d((3, 3), (3, 3)), RuntimeError, "1D tensors expected, but got 2D and 2D tensors"),
                     (((((3,), F64), ((3,), F32))), RuntimeError,
                      "dot : expected both vectors to have same dtype, but found Double and Float"),
                     (((((3,), np.bool_), ((3,), np.bool_))), NotImplementedError, "\"dot\" not implemented"))),
    OpInfo("dot_int", lambda T, a, b: T.dot(a, b), _S(((3,), (3,))), dtypes=("int64",), differentiable=False),
    OpInfo("vdot", lambda T, a, b: T.vdot(a, b), _S(((3,), (3,)), ((0,), (0,))),
           errors=_E((_d((3,), (4,)), RuntimeError, "inconsistent tensor size"),
                     (_d((3, 3), (3, 3)), RuntimeError, "1D tensors expected, but got 2D and 2D tensors"))),
    OpInfo("inner", lambda T, a, b: T.inner(a, b), _S(((3,), (3,)), ((2, 3), (4, 3)), ((5, 2, 3), (4, 3)),
                                                     ((), (4, 3)), ((2, 3), ()), ((2, 0), (3, 0)),
                                                     nc={(1, 0)}),
           errors=_E((_d((2, 3), (4, 2)), RuntimeError,
                      "inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4, 2]"),
                     (((((2, 3), F64), ((4, 3), F32))), RuntimeError, "both inputs should have same dtype"))),
    OpInfo("outer", lambda T, a, b: T.outer(a, b), _S(((2,), (3,)), ((0,), (3,)), ((4,), (1,)), nc={(2, 0)}),
           errors=_E((_d((2, 2), (3,)), RuntimeError, "outer: Expected 1-D argument self, but got 2-D"),
                     (_d((), (3,)), RuntimeError, "outer: Expected 1-D argument self, but got 0-D"))),
    OpInfo("outer_mixed", lambda T, a, b: T.outer(a, b),
           lambda rng, dt: [Sample(arr(rng, (3,), dt), arr(rng, (2,), np.float32))], dtypes=("float64",),
           gradcheck=False),
    OpInfo("ger", lambda T, a, b: T.ger(a, b), _S(((2,), (3,)))),
    OpInfo("addmm", lambda T, c, a, b: T.addmm(c, a, b), _S(((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4)),
                                                           ((), (2, 3), (3, 4)), ((2, 1), (2, 0), (0, 1)),
                                                           ((3, 2), (3, 4), (4, 2)), nc={(4, 1), (4, 0)}),
           errors=_E((_d((3,), (3,), (3, 3)), RuntimeError, "mat1 must be a matrix, got 1-D tensor"),
                     (_d((3,), (3, 3), (3,)), RuntimeError, "mat2 must be a matrix, got 1-D tensor"),
                     (_d((3,), (2, 3), (4, 3)), RuntimeError,
                      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3)"),
                     (_d((4,), (2, 3), (3, 3)), RuntimeError,
                      "The expanded size of the tensor (3) must match the existing size (4) at non-singleton "
                      "dimension 1.  Target sizes: [2, 3].  Tensor sizes: [4]"),
                     (_d((1, 3, 3), (3, 3), (3, 3)), RuntimeError, "must be greater or equal to the number of dim"),
                     (((((3,), F64), ((2, 3), F64), ((3, 3), F32))), RuntimeError,
                      "self and mat2 must have the same dtype, but got Double and Float"),
                     (((((3,), F32), ((2, 3), F64), ((3, 3), F64))), RuntimeError,
                      "self and mat2 must have the same dtype, but got Float and Double"),
                     (((((2, 2), F64), ((2, 3), F32), ((3, 2), F64))), RuntimeError,
                      "mat1 and mat2 must have the same dtype, but got Float and Double"))),
    OpInfo("addmm_beta_alpha", lambda T, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2.0),
           _S(((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4)))),
    OpInfo("addmm_beta0", lambda T, c, a, b: T.addmm(c, a, b, beta=0, alpha=-1.5),
           _S(((2, 4), (2, 3), (3, 4)))),
    OpInfo("addmm_int", lambda T, c, a, b: T.addmm(c, a, b, beta=2, alpha=3), _S(((2, 4), (2, 3), (3, 4))),
           dtypes=("int64",), differentiable=False),
    OpInfo("Tensor.addmm_", lambda T, c, a, b: (c * 1).addmm_(a, b, beta=0.5, alpha=2.0),
           _S(((2, 4), (2, 3), (3, 4))),
           errors=_E((_d((4,), (2, 3), (3, 4)), RuntimeError,
                      "Bad in-place call: input tensor size [4] and output tensor size [2, 4] should match"))),
    OpInfo("addmv", lambda T, c, a, b: T.addmv(c, a, b), _S(((2,), (2, 3), (3,)), ((), (2, 3), (3,)),
                                                           ((2,), (2, 0), (0,)), ((4,), (4, 3), (3,)),
                                                           nc={(3, 1)}),
           errors=_E((_d((2,), (2, 3), (4,)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
                     (_d((3,), (2, 3), (3,)), RuntimeError, "size mismatch, got input (3), mat (2x3), vec (3)"),
                     (_d((2, 2), (2, 3), (3,)), RuntimeError, "vector + matrix @ vector expected, got 2, 2, 1"),
                     (((((2,), F32), ((2, 3), F64), ((3,), F64))), RuntimeError,
                      "addmv input tensors must have the same dtype, but got Float, Double, and Double"))),
    OpInfo("addmv_beta_alpha", lambda T, c, a, b: T.addmv(c, a, b, beta=-0.5, alpha=3.0),
           _S(((2,), (2, 3), (3,)))),
    OpInfo("baddbmm", lambda T, c, a, b: T.baddbmm(c, a, b), _S(((2, 3, 5), (2, 3, 4), (2, 4, 5)),
                                                               ((5,), (2, 3, 4), (2, 4, 5)),
                                                               ((0, 3, 5), (0, 3, 4), (0, 4, 5)),
                                                               ((2, 3, 2), (2, 3, 4), (2, 4, 2)), nc={(3, 1)}),
           errors=_E((_d((5,), (2, 3, 4), (2, 3, 5)), RuntimeError,
                      "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 3]."),
                     (_d((4,), (2, 3, 4), (2, 4, 5)), RuntimeError,
                      "The expanded size of the tensor (5) must match the existing size (4) at non-singleton "
                      "dimension 2.  Target sizes: [2, 3, 5].  Tensor sizes: [4]"),
                     (_d((3,), (3, 3), (2, 3, 3)), RuntimeError, "batch1 must be a 3D tensor"),
                     (((((2, 3, 4), F32), ((2, 3, 4), F64), ((2, 4, 4), F64))), RuntimeError,
                      "Input dtypes must be the same, got: input float, batch1: double, batch2: double"))),
    OpInfo("baddbmm_beta_alpha", lambda T, c, a, b: T.baddbmm(c, a, b, beta=0.5, alpha=-2.0),
           _S(((2, 3, 5), (2, 3, 4), (2, 4, 5)))),
    OpInfo("addbmm", lambda T, c, a, b: T.addbmm(c, a, b), _S(((3, 5), (2, 3, 4), (2, 4, 5)),
                                                             ((5,), (2, 3, 4), (2, 4, 5)),
                                                             ((3, 5), (0, 3, 4), (0, 4, 5)), nc={(0, 1)}),
           errors=_E((_d((3,), (2, 3, 3), (3, 3, 3)), RuntimeError,
                      "batch1 and batch2 must have same number of batches, got 2 and 3"),
                     (_d((3, 5), (2, 3, 4), (2, 3, 5)), RuntimeError,
                      "Incompatible matrix sizes for bmm (3x4 and 3x5)"),
                     (_d((4,), (2, 3, 3), (2, 3, 3)), RuntimeError, "The expanded size of the tensor (3)"),
                     (((((3, 4), F32), ((2, 3, 4), F64), ((2, 4, 4), F64))), RuntimeError,
                      "self and mat2 must have the same dtype, but got Float and Double"))),
    OpInfo("addbmm_beta_alpha", lambda T, c, a, b: T.addbmm(c, a, b, beta=2.0, alpha=0.5),
           _S(((3, 5), (2, 3, 4), (2, 4, 5)))),
    OpInfo("kron", lambda T, a, b: T.kron(a, b), _S(((2, 3), (3, 2)), ((2,), (3, 2)), ((), (3,)), ((), ()),
                                                   ((3,), (2, 2, 2)), ((0, 2), (2, 3)), ((3, 2), (2, 2)))),
    # (torch 2.13's kron raises a view error on a Fortran-ordered input, so no non-contiguous sample)
    OpInfo("kron_mixed", lambda T, a, b: T.kron(a, b),
           lambda rng, dt: [Sample(arr(rng, (3,), dt), arr(rng, (2,), np.float32))], dtypes=("float64",),
           gradcheck=False),
    OpInfo("tensordot", lambda T, a, b: T.tensordot(a, b, dims=2), _S(((2, 3, 4), (3, 4, 5)), ((3, 4), (3, 4)),
                                                                     ((2, 0, 4), (0, 4, 3)), nc={(1, 0)}),
           errors=lambda: [
               ErrorSample(Sample(np.zeros((2, 3, 4)), np.zeros((3, 5, 5))), RuntimeError,
                           "contracted dimensions need to match, but first has size 4 in dim -1 and second has "
                           "size 5 in dim 1"),
           ]),
    OpInfo("tensordot_lists", lambda T, a, b: T.tensordot(a, b, dims=([1, 2], [1, 0])),
           _S(((2, 3, 4), (4, 3, 5)))),
    OpInfo("tensordot_dims", lambda T, a, b, dims: T.tensordot(a, b, dims=dims),
           lambda rng, dt: [Sample(arr(rng, (2, 3, 4), dt), arr(rng, (4, 3, 5), dt), ([-1, -2], [0, 1]), name="neg"),
                            Sample(arr(rng, (2, 3), dt), arr(rng, (3, 2), dt), ((1,), (0,)), name="tuples"),
                            Sample(arr(rng, (2, 1), dt), arr(rng, (3, 2), dt), ([1], [0]), name="size1"),
                            Sample(noncontig(arr(rng, (3, 4), dt)), arr(rng, (4, 3), dt), ([0, 1], [1, 0]),
                                   name="noncontig")],
           errors=lambda: [
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((3, 2)), -1), RuntimeError,
                           "tensordot expects dims >= 0, but got dims=-1"),
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((3, 2)), 3), RuntimeError,
                           "tensordot expects dims < ndim_a or ndim_b, but got dims=3"),
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((3, 2)), ([0], [0, 1])), RuntimeError,
                           "both dimension lists should have same length"),
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((3, 2)), ([1, 1], [0, 0])), RuntimeError,
                           "dim 1 appears multiple times in the list of dims"),
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((3, 2)), ([0], [5])), IndexError,
                           "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((3, 2)), (1, 0)), TypeError, "must be tuple of ints"),
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((3, 2), np.float32), 1), RuntimeError,
                           "both inputs should have same dtype"),
           ]),
    OpInfo("tensordot_0", lambda T, a, b: T.tensordot(a, b, dims=0), _S(((2, 3), (4,)))),
    OpInfo("tensordot_1", lambda T, a, b: T.tensordot(a, b, 1), _S(((2, 3), (3, 2)))),
]


def _ein(eq, *shapes, name=None):
    return OpInfo(name or f"einsum[{eq}]", lambda T, *ops: T.einsum(eq, *ops), _S(tuple(shapes)))


OPS += [
    _ein("ij,jk->ik", (2, 3), (3, 4)),
    _ein("bij,bjk->bik", (2, 2, 3), (2, 3, 4)),
    _ein("bij,bjk->bik", (1, 2, 3), (2, 3, 4), name="einsum[bcast]"),
    _ein("i,i->", (3,), (3,)),
    _ein("ij->ji", (3, 2)),
    _ein("ii->i", (3, 3)),
    _ein("iij->ij", (2, 2, 3)),
    _ein("ii", (3, 3)),
    _ein("ij->i", (2, 3)),
    _ein("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    _ein("...ij,...jk->...ik", (2, 2, 3), (2, 3, 4)),
    _ein("...ij,...jk", (2, 1, 2, 3), (3, 3, 4), name="einsum[ell_bcast]"),
    _ein("ij,jk", (2, 3), (3, 4)),
    _ein("ij,ij->ij", (2, 3), (2, 3)),
    _ein("i,j->ij", (2,), (3,)),
    _ein("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)),
    _ein("ij,j->", (2, 3), (3,)),
    _ein("ij,jk->ik", (2, 0), (0, 4), name="einsum[empty]"),
    OpInfo("einsum_list", lambda T, a, b: T.einsum("ij,jk->ik", [a, b]), _S(((2, 3), (3, 4))),
           errors=lambda: [
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((4, 4))), RuntimeError,
                           "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously "
                           "seen size 3"),
               ErrorSample(Sample(np.zeros((2, 3, 3)), np.zeros((3, 4))), RuntimeError,
                           "einsum(): the number of subscripts in the equation (2) does not match the number of "
                           "dimensions (3) for operand 0 and no ellipsis was given"),
               ErrorSample(Sample(np.zeros((2, 3)), np.zeros((3, 4), np.float32)), RuntimeError,
                           "expected scalar type Double but found Float"),
           ]),
    OpInfo("einsum_errors", lambda T, eq, *ops: T.einsum(eq, *ops), lambda rng, dt: [], dtypes=(),
           errors=lambda: [
               ErrorSample(Sample("ij,jk->ik", np.zeros((2, 3))), RuntimeError,
                           "einsum(): fewer operands were provided than specified in the equation"),
               ErrorSample(Sample("i->i", np.zeros(3), np.zeros(3)), RuntimeError,
                           "einsum(): more operands were provided than specified in the equation"),
               ErrorSample(Sample("i1->i", np.zeros((3, 3))), RuntimeError,
                           "einsum(): invalid subscript given at index 1 in the equation string"),
               ErrorSample(Sample("ij->k", np.zeros((3, 3))), RuntimeError,
                           "einsum(): output subscript k does not appear in the equation for any input operand"),
               ErrorSample(Sample("ij->ii", np.zeros((3, 3))), RuntimeError,
                           "einsum(): output subscript i appears more than once in the output"),
               ErrorSample(Sample("ii->i", np.zeros((3, 4))), RuntimeError,
                           "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 4 != 3"),
           ]),
]
