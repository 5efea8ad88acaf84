"""Forward AD and function transforms on device='cuda' (Numba's simulator) against the same on the CPU: tangents
of elementwise chains, matmul, reductions and softmax; jacfwd, jacrev and hessian."""
import numpy as np
import pytest

import numgrad
import numgrad.autograd.forward_ad as fw

CHAINS = {
    "elementwise": lambda a, b: (a.sin() * b + a.exp() / (b * b + 1)).tanh(),
    "matmul_sum": lambda a, b: (a @ b.t()).relu().sum(1),
    "softmax_max": lambda a, b: numgrad.softmax(a * b, 1) + a.amax(0),
}


def _tangent(fn, device):
    rng = np.random.default_rng(0)
    x, y, tx, ty = (numgrad.tensor(rng.standard_normal((3, 4)), device=device) for _ in range(4))
    with fw.dual_level():
        out = fn(fw.make_dual(x, tx), fw.make_dual(y, ty))
        primal, tangent = fw.unpack_dual(out)
        return primal.cpu().numpy(), tangent.cpu().numpy(), str(tangent.device)


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_tangents_on_cuda_equal_the_cpu(name):
    gpu, cpu = _tangent(CHAINS[name], "cuda"), _tangent(CHAINS[name], "cpu")
    assert gpu[2].startswith("cuda")
    for g, c in zip(gpu[:2], cpu[:2]):
        np.testing.assert_allclose(g, c, rtol=1e-12, atol=1e-12)


def test_jacobians_and_hessian_on_cuda_equal_the_cpu():
    f = lambda a: (a.sin() * a).sum() * a.exp()  # noqa: E731
    x = np.random.default_rng(1).standard_normal(4)
    for transform in (numgrad.func.jacfwd, numgrad.func.jacrev):
        np.testing.assert_allclose(transform(f)(numgrad.tensor(x, device="cuda")).cpu().numpy(),
                                   transform(f)(numgrad.tensor(x)).numpy(), rtol=1e-12, atol=1e-12)
    g = lambda a: (a.sin() * a).sum()  # noqa: E731
    np.testing.assert_allclose(numgrad.func.hessian(g)(numgrad.tensor(x, device="cuda")).cpu().numpy(),
                               numgrad.func.hessian(g)(numgrad.tensor(x)).numpy(), rtol=1e-12, atol=1e-12)
