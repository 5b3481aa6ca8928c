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


@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 3), (0, 1)), ((0, 3), (5, 1)),
                                         ((4,), (3,)), ((), ())])
def test_empty_strided_has_the_strides_it_was_asked_for(size, stride):
    res = []
    for T in (torch, glassgrad):
        t = T.empty_strided(size, stride, dtype=T.float64)
        res.append((tuple(t.shape), t.stride(), t.is_contiguous(), t.untyped_storage().nbytes()
                    if T is torch else glassgrad.backend.owner(t._data).nbytes))
        t.fill_(1.0)                                  # one value: allowed where elements share memory too
        assert t.sum().item() == t.numel()
        if 0 in stride and t.numel() > 1:            # elements share memory: other writes are refused
            with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
                t.add_(1.0)
    assert res[0] == res[1]


@pytest.mark.parametrize("size,stride", [((2,), (-1,)), ((2, 2), (2 ** 62, 1)), ((-1,), (1,))])
def test_empty_strided_errors_match_torch(size, stride):
    errs = []
    for T in (torch, glassgrad):
        with pytest.raises(RuntimeError) as e:
            T.empty_strided(size, stride)
        errs.append(str(e.value))
    assert errs[0] == errs[1]
