"""Regression tests for what the differential fuzz's long profile found in issue 30's ops and dtypes (seeds
13 and on): one test per root cause, each against torch; the docstring says what went wrong."""
import pytest

from helpers.op_compare import check

BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")


@pytest.mark.parametrize("dtype", ("int64", "uint8", "int16", "bool"))
def test_bitwise_ops_of_0d_tensors_stay_0d(dtype):
    """The bitwise ops made their result with np.ascontiguousarray, which turns a 0-d array 1-d: bitwise_not of
    a 0-d tensor had shape (1,) and an in-place mul_ by it then failed to broadcast."""
    def x(lib):
        return lib.tensor(3 if dtype != "bool" else True, dtype=getattr(lib, dtype))
    check(lambda lib: lib.bitwise_not(x(lib)))
    check(lambda lib: x(lib).bitwise_not())
    for name in BITWISE if dtype != "bool" else BITWISE[:3]:
        check(lambda lib: getattr(lib, name)(x(lib), x(lib)))
        check(lambda lib: getattr(lib, name)(x(lib), 1))
    check(lambda lib: x(lib).cumprod(0).mul_(lib.bitwise_xor(x(lib), x(lib))))
