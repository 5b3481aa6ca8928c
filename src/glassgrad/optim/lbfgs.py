"""torch.optim.LBFGS (optionally with the strong-Wolfe line search).

The computation runs on NumPy arrays and NumPy scalars of the parameters' dtype, which follow the same
promotion rules as PyTorch's 0-d tensors mixed with Python floats; the state is stored as Tensors.
"""
import numpy as np

from .._tensor import Tensor, _make
from ..autograd.grad_mode import enable_grad
from .optimizer import Optimizer, _fma, _to_scalar

__all__ = ["LBFGS"]


def _arr(x):
    return x._data if isinstance(x, Tensor) else x


def _ten(x):
    if isinstance(x, (np.ndarray, np.generic)):
        return _make(np.array(x))
    return x


def _scalar(x):
    """0-d array -> NumPy scalar (keeps the dtype, like a 0-d tensor in arithmetic)."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
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
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = np.dot(g_new, d)
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
        gtd_new = np.dot(g_new, d)
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
        gtd_new = np.dot(g_new, d)
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
            views.append(np.zeros(p._data.size, p._data.dtype) if g is None else g._data.reshape(-1))
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
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

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
        if np.abs(flat_grad).max() <= tol_grad:
            return orig_loss

        d = _arr(state.get("d"))
        t = _scalar(_arr(state.get("t")))
        old_dirs = [_arr(v) for v in state.get("old_dirs") or []]
        old_stps = [_arr(v) for v in state.get("old_stps") or []]
        ro = [_scalar(_arr(v)) for v in state.get("ro") or []]
        H_diag = _scalar(_arr(state.get("H_diag")))
        prev_flat_grad = _arr(state.get("prev_flat_grad"))
        prev_flat_grad = None if prev_flat_grad is None else prev_flat_grad.copy()
        prev_loss = state.get("prev_loss")
        al = None if "al" not in state else [_scalar(_arr(v)) for v in state["al"]]

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = np.dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / np.dot(y, y)
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad
                dt = q.dtype.type
                for i in range(num_old - 1, -1, -1):
                    al[i] = np.dot(old_stps[i], q) * ro[i]
                    q = _fma(old_dirs[i], dt(-al[i]), q, q.dtype)
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = np.dot(old_dirs[i], r) * ro[i]
                    r = _fma(old_stps[i], dt(al[i] - be_i), r, r.dtype)
                d = r
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = np.dot(flat_grad, d)
            if gtd > -tol_change:
                break
            ls_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(run_closure, x, t, d)

                loss, flat_grad, t, ls_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                             max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tol_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(run_closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tol_grad
                    ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break

        state["d"] = _ten(d)
        state["t"] = _ten(t)
        state["old_dirs"] = [_ten(v) for v in old_dirs]
        state["old_stps"] = [_ten(v) for v in old_stps]
        state["ro"] = [_ten(v) for v in ro]
        state["H_diag"] = _ten(H_diag)
        state["prev_flat_grad"] = _ten(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = [_ten(v) for v in al]
        return orig_loss
