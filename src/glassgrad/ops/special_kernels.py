"""The gamma family and the modified Bessel functions on NumPy arrays (no tensors, no autograd).

Each kernel follows the algorithm PyTorch's CPU kernels use (Cephes: chbevl Chebyshev series, the
digamma / trigamma recurrences with their asymptotic series, the Hurwitz zeta of Euler-Maclaurin
summation), vectorised: the branches become masks.  Where PyTorch computes a float32 result in float32
arithmetic (digamma, trigamma), the kernel does the same in the array's own dtype; where it accumulates
in double (zeta, lgamma through the C library), the kernel computes in float64 and the caller casts.
ops/special.py builds the differentiable ops on these.
"""
import math

import numpy as np

from ..backend import as_array, libm

__all__ = ["lgamma_arr", "digamma_arr", "trigamma_arr", "zeta_arr", "polygamma_arr", "chbevl",
           "i0_arr", "i0e_arr", "i1_arr", "i1e_arr", "sinc_arr", "compute_dtype"]

_MACHEP = 1.11022302462515654042e-16


def compute_dtype(a):
    """float16 / integer inputs compute in float32 (PyTorch upcasts half; integers arrive promoted)."""
    return a.astype(np.float32) if a.dtype != np.float64 and a.dtype != np.float32 else a


# -- lgamma -------------------------------------------------------------------------------------------
def lgamma_arr(a):
    """log|Gamma(x)| in float64: the C library's lgamma (math.lgamma), +inf at the poles 0, -1, -2, ..."""
    x = as_array(a, np.float64)
    pole = (x <= 0) & (x == np.floor(x))
    safe = np.where(pole, 1.0, x)
    y = libm("lgamma", safe)
    return np.where(pole, np.inf, y)


# -- digamma and trigamma (Cephes psi; PyTorch's calc_digamma / trigamma) ------------------------------
_PSI_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
          -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
          8.33333333333333333333e-2)
_PSI_10 = 2.25175258906672110764


def _digamma_pos(x):
    """digamma for x > 0 (or nan / inf), in x's dtype."""
    dt = x.dtype.type
    res = np.zeros_like(x)
    for _ in range(10):                     # push x up to >= 10
        m = x < 10
        if not m.any():
            break
        res = np.where(m, res - 1 / np.where(m, x, 1), res)
        x = np.where(m, x + dt(1), x)
    z = 1 / (x * x)
    p = np.zeros_like(x)
    for c in _PSI_A:
        p = p * z + dt(c)
    y = np.where(x < dt(1e17), z * p, dt(0))
    return np.where(x == 10, res + dt(_PSI_10), res + np.log(x) - dt(0.5) / x - y)


def digamma_arr(a):
    """psi(x) in a's float dtype: -inf / +inf at +0 / -0, nan at negative integers, reflection below 0."""
    x = compute_dtype(as_array(a))
    dt = x.dtype.type
    neg = x < 0
    r = np.modf(x.astype(np.float64))[0]
    refl = (math.pi / np.tan(math.pi * np.where(neg, r, 0.5))).astype(x.dtype)
    pos = _digamma_pos(np.where(neg, dt(1) - x, x))
    out = np.where(neg, pos - refl, pos)
    out = np.where(neg & (x == np.trunc(x)), dt(np.nan), out)
    return np.where(x == 0, np.copysign(dt(np.inf), -x), out)


def trigamma_arr(a):
    """psi'(x) in a's float dtype (PyTorch's trigamma: reflection below 1/2, six steps, asymptotic series)."""
    x = compute_dtype(as_array(a))
    dt = x.dtype.type
    low = x < dt(0.5)
    s = np.sin(dt(math.pi) * np.where(low, x, 0))
    res = np.where(low, -(dt(math.pi) * dt(math.pi)) / (s * s), dt(0))
    x = np.where(low, dt(1) - x, x)
    for _ in range(6):
        res = res + 1 / (x * x)
        x = x + dt(1)
    ixx = 1 / (x * x)
    res = res + (1 + 1 / (2 * x) + ixx * (dt(1. / 6) - ixx * (dt(1. / 30) - ixx * dt(1. / 42)))) / x
    return np.where(low, -res, res)


# -- Hurwitz zeta (Cephes zeta: direct sum, then Euler-Maclaurin) ---------------------------------------
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta_sum(x, q, s, done, cap=100000):
    """The direct sum of (q + i)^-x while i < 9 or q + i <= 9; returns (s, a, b) and marks the converged."""
    a, b = q.copy(), np.zeros_like(q)
    idx = np.flatnonzero(~done)
    i = 0
    while idx.size and i < cap:
        i += 1
        a[idx] += 1
        bb = a[idx] ** -x[idx]
        s[idx] += bb
        b[idx] = bb
        si = s[idx]
        conv = (-_MACHEP * si < bb) & (bb < _MACHEP * si)
        done[idx[conv]] = True
        ai = a[idx]
        idx = idx[~conv & ((i < 9) | (ai <= 9))]
    return a, b


def zeta_arr(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x in float64 (PyTorch's zeta, nan for x < 1, inf at x = 1
    and at the poles q = 0, -1, ...)."""
    x, q = np.broadcast_arrays(as_array(x, np.float64), as_array(q, np.float64))
    shape = x.shape
    x, q = x.ravel().copy(), q.ravel().copy()
    early = np.full(x.shape, np.nan, like=x)
    qint = q == np.floor(q)
    early = np.where((q <= 0) & (x != np.floor(x)), np.nan, early)
    early = np.where((q <= 0) & qint, np.inf, early)
    early = np.where(x < 1, np.nan, early)
    early = np.where(x == 1, np.inf, early)
    pre = (x <= 1) | ((q <= 0) & (qint | (x != np.floor(x))))
    done = pre.copy()
    s = np.where(pre, 0.0, np.abs(q) ** -x * np.where((q < 0) & (np.fmod(x, 2) != 0), -1.0, 1.0))
    a, b = _zeta_sum(x, q, s, done)
    w = a
    t_ = ~done
    s = np.where(t_, s + b * w / (x - 1) - 0.5 * b, s)
    aa, k = np.ones_like(x), 0.0
    for c in _ZETA_A:
        aa = aa * (x + k)
        b = b / w
        t = aa * b / c
        s = np.where(t_, s + t, s)
        t_ = t_ & ~(np.abs(t / s) < _MACHEP)
        k += 1
        aa = aa * (x + k)
        b = b / w
        k += 1
    return np.where(pre, early, s).reshape(shape)


def polygamma_arr(n, a):
    """psi^(n)(x): digamma (n = 0), trigamma (n = 1), else (-1)^(n+1) n! zeta(n + 1, x), as PyTorch."""
    x = compute_dtype(as_array(a))
    if n == 0:
        return digamma_arr(x)
    if n == 1:
        return trigamma_arr(x)
    dt = x.dtype.type
    with np.errstate(over="ignore"):
        fac = dt(math.exp(math.lgamma(n + 1.0))) if n < 171 else dt(np.inf)
    z = zeta_arr(float(n + 1), x).astype(x.dtype)
    return dt(1 if n % 2 else -1) * fac * z


# -- modified Bessel functions of the first kind (Cephes i0, i0e, i1, i1e) ---------------------------
def chbevl(x, coef):
    """Chebyshev series sum_i coef[i] T_i(x) (Cephes' Clenshaw recurrence, coefficients high to low)."""
    b0, b1, b2 = np.full_like(x, coef[0]), np.zeros_like(x), np.zeros_like(x)
    for c in coef[1:]:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


_I0_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
         1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
         -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
         9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
         -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
         1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
         -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
         1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
         -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
         1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
_I0_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
         3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
         1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
         -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
         -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
         3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
         2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
         8.04490411014108831608e-1)
_I1_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
         -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
         3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
         -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
         9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
         -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
         4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
         -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
         2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
         -1.76416518357834055153e-1, 2.52587186443633654823e-1)
_I1_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
         -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
         -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
         4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
         -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
         3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
         -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
         -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
         7.78576235018280120474e-1)


def _bessel_i(a, small, large, odd, scaled):
    """exp(-|x|) I(|x|) from the two Chebyshev series (small: |x| <= 8, times |x| for I1), unscaled by
    exp(|x|) unless `scaled`, with the sign of x for the odd order.  float64."""
    x = np.abs(as_array(a, np.float64))
    le = x <= 8
    ys = chbevl(np.where(le, x / 2 - 2, 0.0), small)
    if odd:
        ys = ys * x
    yl = chbevl(np.where(le, 0.0, 32 / np.where(le, 1.0, x) - 2), large) / np.sqrt(x)
    e = 1.0 if scaled else np.exp(np.abs(compute_dtype(as_array(a)))).astype(np.float64)  # float32 overflows as torch; half computes in float32
    out = np.where(le, e * ys, e * yl)
    if odd:
        out = np.where(as_array(a) < 0, -out, out)
    return out


def i0_arr(a):
    return _bessel_i(a, _I0_A, _I0_B, False, False)


def i0e_arr(a):
    return _bessel_i(a, _I0_A, _I0_B, False, True)


def i1_arr(a):
    return _bessel_i(a, _I1_A, _I1_B, True, False)


def i1e_arr(a):
    return _bessel_i(a, _I1_A, _I1_B, True, True)


def sinc_arr(a):
    """sin(pi x) / (pi x), 1 at 0 (PyTorch's sinc: the product pi x in the input's dtype)."""
    x = as_array(a)
    px = x * x.dtype.type(math.pi)
    return np.where(x == 0, x.dtype.type(1), np.sin(px) / np.where(x == 0, 1, px))


# -- the normal distribution's functions: erfcx, ndtri, log_ndtr; entr ---------------------------------
_ISPI = 0.56418958354775628694807945156   # 1 / sqrt(pi)
def _erfc(x):
    return libm("erfc", x)


def _erfcx_pos(x):
    """exp(x^2) erfc(x) for x >= 0 (float64): directly below 2, by erfc's continued fraction up to 50, by
    its five-term expansion above (PyTorch's), 1 / (sqrt(pi) x) above 5e7."""
    small = x < 2
    xs = np.where(small, x, 0.0)
    direct = np.exp(xs * xs) * _erfc(xs)
    xc = np.where(small, 2.0, x)
    k = np.full_like(xc, 1.0) * xc
    for j in range(120, 0, -1):
        k = xc + (j / 2) / k
    cf = _ISPI / k
    x2 = xc * xc
    big = _ISPI * (x2 * (x2 + 4.5) + 2) / (xc * (x2 * (x2 + 5) + 3.75))
    big = np.where(xc > 5e7, _ISPI / xc, big)
    return np.where(small, direct, np.where(xc > 50, big, cf))


def erfcx_arr(a):
    """The scaled complementary error function exp(x^2) erfc(x), float64 (inf below -26.7, as PyTorch)."""
    a = as_array(a)
    x = a.astype(np.float64)
    pos = _erfcx_pos(np.abs(x))
    xx = (a * a).astype(np.float64)         # x^2 in the input's dtype, as PyTorch (float32: its rounding)
    neg = np.where(x < -26.7, np.inf, 2 * np.exp(xx) - pos)
    return np.where(np.isnan(x), x, np.where(x >= 0, pos, neg))


def _polevl(x, coef):
    p = np.zeros_like(x)
    for c in coef:
        p = p * x + c
    return p


_NDTRI_P0 = (-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
             1.39312609387279679503e1, -1.23916583867381258016e0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
             -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
             1.59056225126211695515e1, -1.18331621121330003142e0)
_NDTRI_P1 = (4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
             4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
             -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
             1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
             -3.80806407691578277194e-2, -9.33259480895457427372e-4)
_NDTRI_P2 = (3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
             1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
             3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0,
             2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4,
             2.89247864745380683936e-6, 6.79019408009981274425e-9)
_EXPM2 = 0.13533528323661269189


def ndtri_arr(a):
    """The inverse of the standard normal CDF (Cephes ndtri), float64."""
    y0 = as_array(a, np.float64)
    upper = y0 > 1 - _EXPM2
    y = np.where(upper, 1 - y0, y0)
    mid = y > _EXPM2
    ym = np.where(mid, y - 0.5, 0.0)
    y2 = ym * ym
    xm = (ym + ym * (y2 * _polevl(y2, _NDTRI_P0) / _polevl(y2, _NDTRI_Q0))) * 2.50662827463100050242
    yt = np.where(mid | (y <= 0), 0.5, y)
    x = np.sqrt(-2.0 * np.log(yt))
    x0 = x - np.log(x) / x
    z = 1 / x
    x1 = np.where(x < 8, z * _polevl(z, _NDTRI_P1) / _polevl(z, _NDTRI_Q1),
                  z * _polevl(z, _NDTRI_P2) / _polevl(z, _NDTRI_Q2))
    xt = x0 - x1
    out = np.where(mid, xm, np.where(upper, xt, -xt))
    out = np.where(y0 == 0, -np.inf, np.where(y0 == 1, np.inf, out))
    return np.where((y0 < 0) | (y0 > 1), np.nan, out)


def log_ndtr_arr(a):
    """log of the standard normal CDF (SciPy's, as PyTorch): through erfcx below -1, log1p(-erfc / 2) above."""
    x = as_array(a, np.float64)
    t = x * 0.7071067811865476
    low = x < -1
    tl = np.where(low, t, 0.0)
    lo = np.log(erfcx_arr(-tl) / 2) - tl * tl
    hi = np.log1p(-_erfc(np.where(low, 0.0, t)) / 2)
    return np.where(low, lo, hi)


def entr_arr(a):
    """-x log(x): 0 at 0, -inf below 0, nan at nan (in a's dtype)."""
    x = as_array(a)
    out = np.where(x > 0, -x * np.log(np.where(x > 0, x, 1)), np.where(x == 0, x.dtype.type(0), -np.inf))
    return np.where(np.isnan(x), x, out).astype(x.dtype)
