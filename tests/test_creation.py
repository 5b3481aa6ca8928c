"""torch.tensor(data)'s dtype inference, against torch."""
import numpy as np
import pytest
import torch

import glassgrad

DATA = {
    "ints": [1, 2], "floats": [1.0, 2], "bools": [True, False], "nested": [[1, 2], [3, 4]],
    "np_int32": [np.int32(1), np.int32(2)], "np_uint8": [np.uint8(3)], "np_float32": [np.float32(1.5)],
    "np_float64": [np.float64(1.0)], "np_int32_and_int": [np.int32(1), 2], "np_int16_int32": [np.int16(1), np.int32(2)],
    "np_bool": [np.bool_(True)], "np_nested": [[np.float32(1)], [np.float32(2)]], "np_f32_and_float": [np.float32(1), 2.5],
    "np_int8_and_float": [np.int8(1), 2.5], "np_uint8_and_bool": [np.uint8(1), True],
    "tuple_np": (np.int16(1), np.int16(2)),
}


@pytest.mark.parametrize("key", DATA)
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_tensor_dtype_inference_matches_torch(key, default):
    res = []
    for T in (torch, glassgrad):
        old = T.get_default_dtype()
        T.set_default_dtype(getattr(T, default))
        try:
            t = T.tensor(DATA[key])
            res.append((str(t.dtype), tuple(t.shape), np.asarray(t.tolist()).tolist()))
        finally:
            T.set_default_dtype(old)
    assert res[0] == res[1]
