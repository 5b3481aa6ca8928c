# TEMPORARY STUB written by the lead so the package imports; helper-1 replaces this file wholesale.
import numpy as np
DEFAULT_SEED = 67280421310721
class Generator:
    def __init__(self, seed=DEFAULT_SEED):
        self.manual_seed(seed)
    def manual_seed(self, seed):
        self._seed = seed; self._rs = np.random.RandomState(seed & 0xffffffff); return self
    def initial_seed(self): return self._seed
    def seed(self): return self._seed
    def get_state(self): return np.zeros(1, np.uint8)
    def set_state(self, s): pass
def rand(g, shape, dtype): return g._rs.random_sample(shape).astype(dtype)
def uniform(g, shape, a, b, dtype): return (a + (b - a) * g._rs.random_sample(shape)).astype(dtype)
def randn(g, shape, dtype): return g._rs.standard_normal(shape).astype(dtype)
def normal(g, shape, m, s, dtype): return (m + s * g._rs.standard_normal(shape)).astype(dtype)
def randint(g, lo, hi, shape, dtype): return g._rs.randint(lo, hi, shape).astype(dtype)
def random_(g, shape, dtype, lo=None, hi=None): return g._rs.randint(lo or 0, hi or 2**24, shape).astype(dtype)
def randperm(g, n, dtype): return g._rs.permutation(n).astype(dtype)
def bernoulli_scalar(g, shape, p, dtype): return (g._rs.random_sample(shape) < p).astype(dtype)
def bernoulli_tensor(g, p, dtype): return (g._rs.random_sample(p.shape) < p).astype(dtype)
def exponential(g, shape, l, dtype): return g._rs.exponential(1 / l, shape).astype(dtype)
