"""torch.utils.data._utils.collate"""
from .._collate import (collate, default_collate, default_collate_err_msg_format, default_collate_fn_map,  # noqa: F401
                        default_convert, np_str_obj_array_pattern)
from .._collate import (_collate_floats as collate_float_fn, _collate_ints as collate_int_fn,  # noqa: F401
                        _collate_ndarrays as collate_numpy_array_fn, _collate_np_scalars as collate_numpy_scalar_fn,
                        _collate_strs as collate_str_fn, _collate_tensors as collate_tensor_fn)
