"""pow's constant small exponents are written as products or square roots in the kernel source, not calls."""
import numgrad
from numgrad.kernels import lower


def test_scalar_power_with_a_constant_exponent_becomes_a_product():
    """pow's forward is scalar_power(a, b) (torch's signed-zero rule for +-0.5); a constant exponent in
    POW_FORMS must still become a product: a pow() call in the loop blocks SIMD (a 10M-element gelu-tanh
    written with x ** 3 ran 9x slower)."""
    for expr, want in (("scalar_power(a, 3)", "x * x * x"), ("power(a, 2)", "x * x"),
                       ("scalar_power(a, -0.5)", "np.float32(1) / math.sqrt(x)")):
        assert lower.substitute(expr, (("a", "x"),), "float32", "cpu") == want


def test_the_product_keeps_torch_values_at_signed_zeros():
    x = numgrad.tensor([-0.0, 0.0, 4.0, -2.0])
    assert [str(v) for v in (x ** -0.5).tolist()] == ["-inf", "inf", "0.5", "nan"]
    assert [str(v) for v in (x ** 3).tolist()] == ["-0.0", "0.0", "64.0", "-8.0"]
