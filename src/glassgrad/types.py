"""torch.types: the type aliases torch's signatures use, over glassgrad's types (Number, Device, FileLike,
_size, _dtype, _device, ...). glassgrad has no symbolic shapes, so the Sym* unions are their plain Python types
(IntLikeType is int) and ``py_sym_types`` is empty; it has no DispatchKey or qscheme."""
import os
from builtins import bool as _bool, bytes as _bytes, complex as _complex, float as _float, int as _int, str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, TypeAlias, Union  # noqa: F401

from ._device import device as _device
from ._dtype import dtype as _dtype  # noqa: F401
from ._layout import layout as _layout  # noqa: F401
from ._tensor import Size, Tensor

if TYPE_CHECKING:
    from .autograd.graph import GradientEdge  # noqa: F401

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_TensorOrTensorsOrGradEdge: TypeAlias = Union[Tensor, Sequence[Tensor], "GradientEdge", Sequence["GradientEdge"]]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
_symsize: TypeAlias = Size | Sequence[int]
_dispatchkey: TypeAlias = str

IntLikeType: TypeAlias = int
FloatLikeType: TypeAlias = float
BoolLikeType: TypeAlias = bool
py_sym_types = ()

Number: TypeAlias = int | float | bool
_Number = (int, float, bool)
FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]
Device: TypeAlias = _device | str | int | None


class Storage:
    """The storage protocol torch's annotations name (glassgrad's storages are storage.UntypedStorage /
    TypedStorage): the attributes a storage has."""
    _cdata: int
    device: _device
    dtype: _dtype
    _torch_load_uninitialized: bool
