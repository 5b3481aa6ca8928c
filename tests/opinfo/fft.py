"""Op table rows: torch.fft (ops/fft.py), in real and complex dtypes, with n / s / dim / norm."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, NoGrad, arr, noncontig

ALL = ("float32", "float64", "complex64", "complex128")
REAL = ("float32", "float64")
TOL = dict(atol=1e-4, rtol=1e-4, grad_atol=1e-4, grad_rtol=1e-4)


def _samples(nd=False):
    def gen(rng, dt):
        def A(shape):
            return arr(rng, shape, dt)
        out = [Sample(A((6,)), name="1d"), Sample(A((3, 5)), name="2d"), Sample(noncontig(A((4, 3))), name="noncontig"),
               Sample(A((3, 5)), norm="ortho", name="ortho"), Sample(A((3, 5)), norm="forward", name="forward")]
        if nd:
            out += [Sample(A((3, 4)), s=(2, 6), name="s"), Sample(A((2, 3, 4)), dim=(0, 2), name="dim")]
        else:
            out += [Sample(A((3, 5)), n=4, name="n_short"), Sample(A((3, 5)), n=8, dim=0, name="n_long_dim0")]
        return out
    return gen


def _nd2(rng, dt):
    return [s for s in _samples(True)(rng, dt) if s.name != "1d"]


def _row(name, dtypes, gen=None):
    return OpInfo(f"fft.{name}", (lambda n: lambda T, a, **k: getattr(T.fft, n)(a, **k))(name),
                  gen or _samples(name[-1] == "n"), dtypes=dtypes, **TOL)


OPS = [_row("fft", ALL), _row("ifft", ALL), _row("rfft", REAL), _row("irfft", ALL), _row("hfft", ALL),
       _row("ihfft", REAL), _row("fft2", ALL, _nd2), _row("ifft2", ALL, _nd2), _row("fftn", ALL), _row("ifftn", ALL),
       _row("rfft2", REAL, _nd2), _row("irfft2", ALL, _nd2), _row("rfftn", REAL), _row("irfftn", ALL),
       _row("hfft2", ALL, _nd2), _row("ihfft2", REAL, _nd2), _row("hfftn", ALL), _row("ihfftn", REAL),
       OpInfo("fft.fftshift", lambda T, a, **k: T.fft.fftshift(a, **k), lambda rng, dt: [
           Sample(arr(rng, (3, 4), dt), name="all"), Sample(arr(rng, (3, 5), dt), dim=1, name="dim")], dtypes=ALL),
       OpInfo("fft.ifftshift", lambda T, a, **k: T.fft.ifftshift(a, **k), lambda rng, dt: [
           Sample(arr(rng, (3, 4), dt), name="all"), Sample(arr(rng, (3, 5), dt), dim=(0, 1), name="dims")], dtypes=ALL),
       OpInfo("fft.errors", lambda T, a, **k: T.fft.fft(a, **k), _samples(), dtypes=(), errors=lambda: [
           ErrorSample(Sample(np.ones(4), n=0), RuntimeError, "Invalid number of data points (0) specified"),
           ErrorSample(Sample(np.ones(4), norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
           ErrorSample(Sample(np.ones(4), dim=1), IndexError, "Dimension out of range"),
           ErrorSample(Sample(np.ones(())), IndexError, "Dimension specified as -1 but tensor has no dimensions"),
           ErrorSample(Sample(np.ones(3, np.float16)), RuntimeError, "Unsupported dtype Half")]),
       OpInfo("fft.rfft_errors", lambda T, a, **k: T.fft.rfftn(a, **k), _samples(), dtypes=(), errors=lambda: [
           ErrorSample(Sample(np.ones(4, np.complex64)), RuntimeError, "rfftn expects a real-valued input tensor"),
           ErrorSample(Sample(np.ones((2, 3)), dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
           ErrorSample(Sample(np.ones(4), s=(2, 2)), RuntimeError, "Got shape with 2 values but input tensor only has 1")])]


def _stft_samples(rng, dt):
    w = NoGrad(np.hanning(10)[1:-1].astype(dt))
    return [Sample(arr(rng, (2, 30), dt), 8, window=w, return_complex=True, name="2d"),
            Sample(arr(rng, (30,), dt), 8, hop_length=3, window=w, return_complex=True, name="1d"),
            Sample(arr(rng, (2, 30), dt), 8, window=w, onesided=False, normalized=True, return_complex=True,
                   name="twosided"),
            Sample(arr(rng, (2, 30), dt), 8, window=w, return_complex=False, center=False, name="real_out")]


def _istft_samples(rng, dt):
    w = NoGrad(np.hanning(10)[1:-1].astype(np.float32 if dt == "complex64" else np.float64))
    return [Sample(arr(rng, (2, 5, 9), dt), 8, window=w, name="batched"),
            Sample(arr(rng, (5, 9), dt), 8, hop_length=3, window=w, length=25, name="1d_length"),
            Sample(arr(rng, (2, 8, 9), dt), 8, window=w, onesided=False, return_complex=True, name="complex")]


OPS += [OpInfo("stft", lambda T, a, *r, **k: T.stft(a, *r, **k), _stft_samples, dtypes=REAL, **TOL),
        OpInfo("istft", lambda T, a, *r, **k: T.istft(a, *r, **k), _istft_samples, dtypes=("complex64", "complex128"),
               **TOL)]
