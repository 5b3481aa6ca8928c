"""The Tensor methods of complex tensors (ops/complex.py), each a one-line delegation to its op module;
``Tensor`` inherits them before those of ``_tensor_methods.py`` and ``_tensor_protocol.py`` (H, mH and
adjoint conjugate complex tensors)."""
from . import ops as _ops


def _set_real(self, value):
    _ops.complex.real(self).copy_(value)


def _set_imag(self, value):
    _ops.complex.imag(self).copy_(value)


class TensorComplexMethods:
    __slots__ = ()

    real = property(lambda self: _ops.complex.real(self), _set_real)
    imag = property(lambda self: _ops.complex.imag(self), _set_imag)
    H = property(lambda self: _ops.complex.conj(_ops.views.T(self)))
    mH = property(lambda self: _ops.complex.conj(_ops.views.mT(self)))

    def adjoint(self):
        return _ops.complex.adjoint(self)
    def is_complex(self):
        return self._data.dtype.kind == "c"
    def is_conj(self):
        return _ops.complex.is_conj(self)
    def is_neg(self):
        return _ops.complex.is_neg(self)
    def conj(self):
        return _ops.complex.conj(self)
    def conj_physical(self):
        return _ops.complex.conj_physical(self)
    def conj_physical_(self):
        return _ops.complex.conj_physical_(self)
    def resolve_conj(self):
        return _ops.complex.resolve_conj(self)
    def resolve_neg(self):
        return _ops.complex.resolve_neg(self)
    def angle(self):
        return _ops.complex.angle(self)
    def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
             normalized=False, onesided=None, return_complex=None, align_to_window=None):
        return _ops.stft.stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                              return_complex, align_to_window)
    def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
              onesided=None, length=None, return_complex=False):
        return _ops.stft.istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                               return_complex)
    def cfloat(self, *, memory_format=None):
        return self.to(_ops.complex._dtype.complex64, memory_format=memory_format)
    def cdouble(self, *, memory_format=None):
        return self.to(_ops.complex._dtype.complex128, memory_format=memory_format)
