"""COO storage: what a sparse Tensor holds in ``_data`` instead of an ndarray (NumPy or device arrays).

``COO(indices, values, shape, coalesced)``: ``indices`` an int64 array (sparse_dim, nnz), ``values`` an
array (nnz, *dense_dims), ``shape`` the tensor's size (sparse dims first, then the dense dims).  It has the
attributes the Tensor core reads from an array (``shape``, ``ndim``, ``size``, ``dtype``), so a sparse
Tensor's metadata costs no branch on the dense path.  It is also the "array" a sparse gradient is in the
backward's array mode: ``COO + COO`` concatenates (uncoalesced, as torch's sparse add of two gradients),
``COO + ndarray`` is dense, ``COO * number`` scales the values.  NumPy refuses it (``__array_ufunc__`` and
``__array_function__`` raise a TypeError that says so, ``__array__`` raises), so a dense kernel handed one fails
loudly instead of computing garbage.
"""
import numpy as np


class COO:
    __slots__ = ("indices", "values", "shape", "coalesced", "shared")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.add and method == "__call__" and not kwargs and len(inputs) == 2:
            a, b = inputs       # ndarray + COO: dense (the engine's sum of a dense and a sparse gradient)
            if tuple(a.shape) != tuple(b.shape):
                raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                                   f"{list(a.shape)} while other has size {list(b.shape)} (FYI: "
                                   "dense-sparse addition does not currently support broadcasting)")
            return (to_dense(a) if isinstance(a, COO) else a) + (to_dense(b) if isinstance(b, COO) else b)
        raise TypeError(f"glassgrad: a sparse tensor reached a dense kernel (NumPy's {ufunc.__name__}); this op "
                        "does not take a sparse operand in this position (convert it with .to_dense())")

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"glassgrad: a sparse tensor reached a dense kernel (NumPy's {func.__name__}); this op "
                        "does not take a sparse operand in this position (convert it with .to_dense())")

    def __init__(self, indices, values, shape, coalesced=False, shared=False):
        self.indices = indices
        self.values = values
        self.shape = tuple(shape)
        self.coalesced = coalesced
        self.shared = shared        # a gradient torch's AccumulateGrad would clone, not steal (see steal)

    # -- what the Tensor core reads --------------------------------------------------------------
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def itemsize(self):
        return self.values.itemsize

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    @property
    def dense_dim(self):
        return self.values.ndim - 1

    @property
    def nnz(self):
        return self.indices.shape[1]

    def __array__(self, dtype=None, copy=None):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    # -- array-like arithmetic (gradients in the backward's array mode) --------------------------
    def astype(self, dtype, copy=True):
        return COO(self.indices, self.values.astype(dtype, copy=copy), self.shape, self.coalesced)

    def copy(self):
        return COO(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def __add__(self, other):
        """The engine's sum of two gradients: coalesced (torch's sum of sparse gradients is)."""
        if other.__class__ is COO:
            dt = np.result_type(self.values, other.values)
            c = coalesce(COO(np.concatenate([self.indices, other.indices], axis=1),
                             np.concatenate([self.values.astype(dt, copy=False), other.values.astype(dt, copy=False)]),
                             self.shape))
            c.shared = True
            return c
        return to_dense(self) + other

    __radd__ = __add__

    def __mul__(self, other):
        return COO(self.indices, self.values * other, self.shape, self.coalesced)

    __rmul__ = __mul__

    def __neg__(self):
        return COO(self.indices, -self.values, self.shape, self.coalesced)

    def __truediv__(self, other):
        return COO(self.indices, self.values / other, self.shape, self.coalesced)


def empty(sparse_dim, shape, dtype, like):
    """A COO of `shape` with no entries (its first `sparse_dim` dims sparse), on the device of array `like`."""
    return COO(np.zeros((sparse_dim, 0), np.int64, like=like),
               np.zeros((0,) + tuple(shape[sparse_dim:]), dtype, like=like), shape, True)


def flat_index(indices, shape):
    """The row-major linear position of each column of `indices` among the sparse dims `shape`."""
    lin = np.zeros(indices.shape[1], dtype=np.int64, like=indices)
    for d, s in enumerate(shape):
        lin *= s
        lin += indices[d]
    return lin


def coalesce(c):
    """Sum duplicate indices and sort them (torch's coalesce: duplicates summed in their order)."""
    if c.coalesced:
        return c
    sd = c.sparse_dim
    lin = flat_index(c.indices, c.shape[:sd])
    uniq, inv = np.unique(lin, return_inverse=True)
    vals = np.zeros((len(uniq),) + c.values.shape[1:], dtype=c.values.dtype, like=c.values)
    if c.values.dtype == np.bool_:
        np.logical_or.at(vals, inv, c.values)
    else:
        np.add.at(vals, inv, c.values)
    idx = np.array(np.unravel_index(uniq, c.shape[:sd]), dtype=np.int64, like=uniq).reshape(sd, len(uniq)) if sd else \
        np.zeros((0, len(uniq)), dtype=np.int64, like=uniq)
    return COO(idx, vals, c.shape, True)


def with_flag(c, coalesced):
    return c if c.coalesced == coalesced else COO(c.indices, c.values, c.shape, coalesced)


def steal(c):
    """A leaf's first sparse gradient, taken over as torch's AccumulateGrad does when its indices and values
    are contiguous (checked here on the values: our indices' layout is NumPy's choice): rebuilt by
    ``_sparse_coo_tensor_unsafe``, which flags it coalesced only for nnz < 2; else (a broadcast gradient, a sum of
    gradients, one sharing its indices: torch clones those) kept as is."""
    if c.__class__ is COO and c.values.flags.c_contiguous and not c.shared:
        return with_flag(c, c.nnz < 2)
    return c


def to_dense(c):
    if c.sparse_dim == 0:       # every entry is the whole (dense) tensor: their sum
        return c.values.sum(0) if c.nnz else np.zeros(c.shape, dtype=c.values.dtype, like=c.values)
    out = np.zeros(c.shape, dtype=c.values.dtype, like=c.values)
    if c.nnz:
        if c.values.dtype == np.bool_:
            np.logical_or.at(out, tuple(c.indices), c.values)
        else:
            np.add.at(out, tuple(c.indices), c.values)
    return out


def add(a, b, alpha=1):
    """a + alpha * b for two COO of one shape, as torch's sparse add: when both hold the same indices array
    the values are added; else the two entry lists are merged as sorted lists (an entry of `a` first unless
    `b`'s is smaller, equal entries summed), which for uncoalesced input keeps torch's order."""
    bv = b.values if alpha == 1 else b.values * alpha
    dt = np.result_type(a.values, bv)
    if a.indices is b.indices:
        return COO(a.indices, (a.values + bv).astype(dt, copy=False), a.shape, a.coalesced)
    av, bv = a.values.astype(dt, copy=False), bv.astype(dt, copy=False)
    if a.nnz == 0 or b.nnz == 0:
        return COO(b.indices if a.nnz == 0 else a.indices, (bv if a.nnz == 0 else av).copy(), a.shape,
                   b.coalesced if a.nnz == 0 else a.coalesced)
    both = a.coalesced and b.coalesced
    if both:
        c = coalesce(COO(np.concatenate([a.indices, b.indices], axis=1), np.concatenate([av, bv]), a.shape))
        return c
    sd = a.sparse_dim
    la, lb = flat_index(a.indices, a.shape[:sd]).tolist(), flat_index(b.indices, a.shape[:sd]).tolist()
    order, i, j, na, nb = [], 0, 0, len(la), len(lb)
    while i < na or j < nb:
        if j >= nb or (i < na and la[i] < lb[j]):
            order.append((i, -1))
            i += 1
        elif i >= na or la[i] > lb[j]:
            order.append((-1, j))
            j += 1
        else:
            order.append((i, j))
            i += 1
            j += 1
    ia = np.array([o[0] for o in order], like=a.indices)
    ib = np.array([o[1] for o in order], like=a.indices)
    idx = np.where(ia >= 0, a.indices[:, np.maximum(ia, 0)], b.indices[:, np.maximum(ib, 0)])
    zero = np.zeros((1,) + av.shape[1:], dt, like=av)
    vals = (np.concatenate([av, zero])[np.where(ia >= 0, ia, na)] + np.concatenate([bv, zero])[np.where(ib >= 0, ib, nb)])
    return COO(idx, vals, a.shape, False)


def gather(g, indices, sparse_shape):
    """The values of the gradient `g` (a dense array or a COO) at the columns of `indices`: (nnz, *dense)."""
    if not isinstance(g, COO):
        return g[tuple(indices)]
    g = coalesce(g)
    lin = flat_index(indices, sparse_shape)
    glin = flat_index(g.indices, sparse_shape)
    out = np.zeros((indices.shape[1],) + g.values.shape[1:], dtype=g.values.dtype, like=g.values)
    if len(glin):
        pos = np.clip(np.searchsorted(glin, lin), 0, len(glin) - 1)
        hit = glin[pos] == lin
        out[hit] = g.values[pos[hit]]
    return out


class CSR(COO):
    """Compressed sparse row storage of a 2-D tensor (``crow`` (nrows + 1,), ``col`` (nnz,), ``values`` (nnz,)).
    It also reads as the (coalesced) COO it stands for -- ``indices`` is built from crow / col on first use --
    so the COO kernels (products, to_dense, gather) run on it unchanged."""
    __slots__ = ("crow", "col", "_idx")

    def __init__(self, crow, col, values, shape):
        self.crow, self.col, self._idx = crow, col, None
        self.values = values
        self.shape = tuple(shape)
        self.coalesced = True
        self.shared = False

    @property
    def indices(self):
        if self._idx is None:
            rows = np.repeat(np.arange(len(self.crow) - 1, dtype=np.int64, like=self.crow), np.diff(self.crow))
            self._idx = np.stack([rows, self.col.astype(np.int64)])
        return self._idx

    @property
    def sparse_dim(self):
        return 2

    @property
    def nnz(self):
        return len(self.col)

    def astype(self, dtype, copy=True):
        return CSR(self.crow, self.col, self.values.astype(dtype, copy=copy), self.shape)

    def copy(self):
        return CSR(self.crow.copy(), self.col.copy(), self.values.copy(), self.shape)

    def __mul__(self, other):
        return CSR(self.crow, self.col, self.values * other, self.shape)

    __rmul__ = __mul__

    def __add__(self, other):
        if isinstance(other, COO):
            return to_csr(coalesce(COO(np.concatenate([self.indices, other.indices], axis=1),
                                       np.concatenate([self.values, other.values]), self.shape)))
        return to_dense(self) + other

    __radd__ = __add__


def to_csr(c, index_dtype=np.int64):
    """A 2-D COO (coalesced first) as CSR."""
    c = coalesce(c)
    crow = np.zeros(c.shape[0] + 1, dtype=index_dtype, like=c.indices)
    np.cumsum(np.bincount(c.indices[0], minlength=c.shape[0]), out=crow[1:])
    return CSR(crow, c.indices[1].astype(index_dtype), c.values, c.shape)
