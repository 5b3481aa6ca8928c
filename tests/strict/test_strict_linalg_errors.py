"""Linear-algebra failures on the device (issue 17): CuPy's inv / solve / cholesky never raise (cuSOLVER's info
is not checked by default) and the strict device mimics that, so glassgrad must find a singular or not
positive-definite matrix itself: the same LinAlgError, the same info, as on the CPU."""
import numpy as np
import pytest

import glassgrad as gg

SING = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]])       # the first singular
NPD = np.array([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]])        # the second not positive definite


@pytest.mark.parametrize("dtype", [gg.float32, gg.float64])
def test_inv_and_solve_of_a_singular_matrix(dtype):
    for dev in ("cpu", "cuda"):
        a = gg.tensor(SING, dtype=dtype, device=dev)
        with pytest.raises(gg.linalg.LinAlgError, match="The diagonal element 2 is zero"):
            gg.linalg.inv(a)
        with pytest.raises(gg.linalg.LinAlgError, match="singular"):
            gg.linalg.solve(a, gg.ones(2, 2, 1, dtype=dtype, device=dev))
    inv_c, info_c = gg.linalg.inv_ex(gg.tensor(SING, dtype=dtype))
    inv_d, info_d = gg.linalg.inv_ex(gg.tensor(SING, dtype=dtype, device="cuda"))
    assert info_d.device.type == "cuda" and info_d.cpu().tolist() == info_c.tolist() == [2, 0]
    np.testing.assert_allclose(inv_d[1].cpu().numpy(), inv_c[1].numpy())
    x_c, i_c = gg.linalg.solve_ex(gg.tensor(SING, dtype=dtype), gg.ones(2, 2, dtype=dtype))
    x_d, i_d = gg.linalg.solve_ex(gg.tensor(SING, dtype=dtype, device="cuda"), gg.ones(2, 2, dtype=dtype,
                                                                                     device="cuda"))
    assert i_d.cpu().tolist() == i_c.tolist() == [2, 0]
    np.testing.assert_allclose(x_d[1].cpu().numpy(), x_c[1].numpy())


@pytest.mark.parametrize("dtype", [gg.float32, gg.float64])
def test_cholesky_of_a_matrix_not_positive_definite(dtype):
    for dev in ("cpu", "cuda"):
        with pytest.raises(gg.linalg.LinAlgError, match="order 2 is not positive-definite"):
            gg.linalg.cholesky(gg.tensor(NPD, dtype=dtype, device=dev))
    L_c, info_c = gg.linalg.cholesky_ex(gg.tensor(NPD, dtype=dtype))
    L_d, info_d = gg.linalg.cholesky_ex(gg.tensor(NPD, dtype=dtype, device="cuda"))
    assert info_d.device.type == "cuda" and info_d.cpu().tolist() == info_c.tolist() == [0, 2]
    np.testing.assert_allclose(L_d[0].cpu().numpy(), L_c[0].numpy(), rtol=1e-6)
