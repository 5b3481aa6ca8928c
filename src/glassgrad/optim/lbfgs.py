"""torch.optim.LBFGS (optionally with the strong-Wolfe line search).

The computation runs on NumPy arrays and NumPy scalars of the parameters' dtype, which follow the same
promotion rules as PyTorch's 0-d tensors mixed with Python floats; the state is stored as Tensors.
"""
import numpy as np

from .._tensor import Tensor, _make
from ..autograd.grad_mode import enable_grad
from ..backend import _ARRAYS
from .optimizer import Optimizer, _fma, _to_scalar

__all__ = ["LBFGS"]


def _hs(x):
    """A reduction's result as a NumPy scalar of its dtype (what NumPy's reductions return on the CPU): on the
    device a 0-d array, read back -- a device->host sync, as torch's LBFGS syncs on each of these tests."""
    return x if isinstance(x, np.generic) else x.dtype.type(x.item())


def _dot(a, b):
    return _hs(np.dot(a, b))


def _amax(a):
    return _hs(np.abs(a).max())


def _arr(x):
    return x._data if isinstance(x, Tensor) else x


def _ten(x, like=None):
    """x (an array or a NumPy scalar) as a state tensor; a scalar goes beside `like` (the device's arrays)."""
    if isinstance(x, np.generic) and like is not None and like.__class__ is not np.ndarray:
        return _make(np.array(x, like=like))
    if isinstance(x, np.generic) or x.__class__ is np.ndarray:
        return _make(np.array(x))
    if isinstance(x, _ARRAYS):                  # a device array: copied there
        return _make(x.copy())
    return x


def _scalar(x):
    """0-d array -> NumPy scalar (keeps the dtype, like a 0-d tensor in arithmetic)."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    if isinstance(x, _ARRAYS) and x.ndim == 0:     # a device 0-d array: read back (torch syncs on these too)
        return _hs(x)
    return x


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    d_norm = _amax(d)
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    it = 0
    while it < max_ls:
        if f_new > (f + c1 * t * gtd) or (it > 1 and f_new >= f_prev):
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            br, br_f, br_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        lo = t + 0.01 * (t - t_prev)
        hi = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        it += 1
    if it == max_ls:
        br, br_f, br_g = [0, t], [f, f_new], [g, g_new]
    insuf = False
    low, high = (0, 1) if br_f[0] <= br_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(br[1] - br[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1])
        bmax, bmin = max(br), min(br)
        eps = 0.1 * (bmax - bmin)
        if min(bmax - t, t - bmin) < eps:
            if insuf or t >= bmax or t <= bmin:
                t = bmax - eps if abs(t - bmax) < abs(t - bmin) else bmin + eps
                insuf = False
            else:
                insuf = True
        else:
            insuf = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        it += 1
        if f_new > (f + c1 * t * gtd) or f_new >= br_f[low]:
            br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if br_f[0] <= br_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br[high] - br[low]) >= 0:
                br[high], br_f[high], br_g[high], br_gtd[high] = br[low], br_f[low], br_g[low], br_gtd[low]
            br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new.copy(), gtd_new
    return br_f[low], br_g[low], br[low], evals


class _History:
    """What LBFGS keeps between steps (as arrays and NumPy scalars; stored in the state as Tensors):
    the last direction d and step t, the curvature pairs (old_dirs: y, old_stps: s, ro: 1 / y.s), H_diag,
    the previous gradient and loss, and al (the first loop's coefficients)."""
    __slots__ = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss", "al")

    def __init__(self, state):
        self.d = _arr(state.get("d"))
        self.t = _scalar(_arr(state.get("t")))
        self.old_dirs = [_arr(v) for v in state.get("old_dirs") or []]
        self.old_stps = [_arr(v) for v in state.get("old_stps") or []]
        self.ro = [_scalar(_arr(v)) for v in state.get("ro") or []]
        self.H_diag = _scalar(_arr(state.get("H_diag")))
        prev_flat_grad = _arr(state.get("prev_flat_grad"))
        self.prev_flat_grad = None if prev_flat_grad is None else prev_flat_grad.copy()
        self.prev_loss = state.get("prev_loss")
        self.al = None if "al" not in state else [_scalar(_arr(v)) for v in state["al"]]

    def save(self, state):
        state["d"] = _ten(self.d)
        dev = self.d if isinstance(self.d, _ARRAYS) else None     # scalars beside the direction
        state["t"] = _ten(self.t, dev)
        state["old_dirs"] = [_ten(v) for v in self.old_dirs]
        state["old_stps"] = [_ten(v) for v in self.old_stps]
        state["ro"] = [_ten(v, dev) for v in self.ro]
        state["H_diag"] = _ten(self.H_diag, dev)
        state["prev_flat_grad"] = _ten(self.prev_flat_grad)
        state["prev_loss"] = self.prev_loss
        if self.al is not None:
            state["al"] = [_ten(v, dev) for v in self.al]

    def direction(self, flat_grad, history_size):
        """d = -H grad by the two-loop recursion, after adding the newest pair (y, s) when y.s > 1e-10."""
        y = flat_grad - self.prev_flat_grad
        s = self.d * self.t
        ys = _dot(y, s)
        if ys > 1e-10:
            if len(self.old_dirs) == history_size:
                self.old_dirs.pop(0)
                self.old_stps.pop(0)
                self.ro.pop(0)
            self.old_dirs.append(y)
            self.old_stps.append(s)
            self.ro.append(1.0 / ys)
            self.H_diag = ys / _dot(y, y)
        old_dirs, old_stps, ro, num_old = self.old_dirs, self.old_stps, self.ro, len(self.old_dirs)
        if self.al is None:
            self.al = [None] * history_size
        al = self.al
        q = -flat_grad
        dt = q.dtype.type
        for i in range(num_old - 1, -1, -1):
            al[i] = _dot(old_stps[i], q) * ro[i]
            q = _fma(old_dirs[i], dt(-al[i]), q, q.dtype)
        r = q * self.H_diag
        for i in range(num_old):
            be_i = _dot(old_dirs[i], r) * ro[i]
            r = _fma(old_stps[i], dt(al[i] - be_i), r, r.dtype)
        return r


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        views = []
        for p in self._params:
            g = p._grad
            views.append(np.zeros(p._data.size, p._data.dtype, like=p._data) if g is None else g._data.reshape(-1))
        return np.concatenate(views, 0)

    def _add_grad(self, step_size, update):
        off = 0
        for p in self._params:
            x = p._data
            n = x.size
            u = update[off:off + n].reshape(x.shape)
            np.copyto(x, _fma(u, x.dtype.type(step_size), x, x.dtype), casting="unsafe")
            p._vc[0] += 1
            off += n

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, data):
        for p, d in zip(self._params, data):
            np.copyto(p._data, d)
            p._vc[0] += 1

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]

        def run_closure():
            with enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = run_closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if _amax(flat_grad) <= tol_grad:
            return orig_loss

        h = _History(state)
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                h.d = -flat_grad
                h.old_dirs, h.old_stps, h.ro = [], [], []
                h.H_diag = 1
            else:
                h.d = h.direction(flat_grad, group["history_size"])
            h.prev_flat_grad = flat_grad.copy()
            h.prev_loss = loss
            if state["n_iter"] == 1:
                h.t = min(1.0, 1.0 / _hs(np.abs(flat_grad).sum())) * lr
            else:
                h.t = lr
            gtd = _dot(flat_grad, h.d)
            if gtd > -tol_change:
                break
            loss, flat_grad, ls_evals, opt_cond = self._move(run_closure, h, loss, flat_grad, gtd, n_iter,
                                                             max_iter, max_eval - current_evals)
            current_evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _amax(h.d * h.t) <= tol_change:
                break
            if abs(loss - h.prev_loss) < tol_change:
                break
        h.save(state)
        return orig_loss

    def _move(self, run_closure, h, loss, flat_grad, gtd, n_iter, max_iter, max_ls):
        """Step along h.d: by the strong-Wolfe line search (which sets h.t), or by h.t and one new evaluation
        (none on the last iteration).  Returns (loss, flat_grad, evaluations, optimal)."""
        group = self.param_groups[0]
        line_search_fn, tol_grad = group["line_search_fn"], group["tolerance_grad"]
        if line_search_fn is not None:
            if line_search_fn != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = self._clone_param()

            def obj_func(x, t, d):
                return self._directional_evaluate(run_closure, x, t, d)

            loss, flat_grad, h.t, ls_evals = _strong_wolfe(obj_func, x_init, h.t, h.d, loss, flat_grad, gtd,
                                                           max_ls=max_ls)
            self._add_grad(h.t, h.d)
            return loss, flat_grad, ls_evals, _amax(flat_grad) <= tol_grad
        self._add_grad(h.t, h.d)
        if n_iter == max_iter:
            return loss, flat_grad, 0, False
        loss = float(run_closure())
        flat_grad = self._gather_flat_grad()
        return loss, flat_grad, 1, _amax(flat_grad) <= tol_grad
