"""Regression tests for what the fuzz's tensor-ops family (ops_tensorops.py) found: one test per root cause, each
against torch; the docstring says what went wrong."""
import numpy as np

from helpers.op_compare import check, check_error, rand


def test_index_ops_with_empty_and_scalar_sources():
    """index_add/index_copy reshaped their source to the region's shape, which NumPy cannot infer from 0 elements;
    a 0-d source and a 0-d self have torch's own messages."""
    check(lambda lib, x: x.index_add(1, lib.tensor([], dtype=lib.int64), lib.zeros(2, 0, 3)), rand(2, 0, 3))
    check(lambda lib, x: x.index_copy(0, lib.tensor([], dtype=lib.int64), lib.zeros(0, 3)), rand(0, 3))
    check(lambda lib, x: x.index_copy(0, lib.tensor([0]), lib.tensor(5.)), rand())
    check_error(lambda lib, x: x.index_copy(1, lib.tensor([], dtype=lib.int64), lib.tensor(1.)), rand(2, 3))
    check_error(lambda lib, x: x.index_copy(1, lib.tensor([0]), lib.tensor(1.)), rand(2, 3))
    check_error(lambda lib, x: x.index_add(1, lib.tensor([0]), lib.tensor(1.)), rand(2, 3))
    check_error(lambda lib, x: x.index_add(-1, lib.tensor([], dtype=lib.int64), lib.tensor(1.)), rand())


def test_zero_dim_inputs_of_roll_movedim_trace_cummax():
    """roll takes no dim of a 0-d tensor; movedim of a 0-d tensor is an alias; trace refuses bool before the
    dims; cummax names a scalar's bad dim itself, and returns an empty input's empty result before any dim check."""
    check_error(lambda lib, x: lib.roll(x, 1, -1), rand())
    check(lambda lib, x: lib.roll(x, 1), rand())
    check(lambda lib, x: lib.movedim(x, -1, 0), rand())
    check_error(lambda lib: lib.trace(lib.tensor(True)))
    check_error(lambda lib, x: lib.cummax(x, 1), rand())
    check(lambda lib, x: tuple(lib.cummin(x, -4)), rand(1, 0, 3))
    check_error(lambda lib, x: lib.cumsum(x, -4), rand(1, 0, 3))


def test_first_negative_size_and_dim_before_dtype():
    """repeat names the first negative size; logcumsumexp checks the dim before the dtype; rot90 checks the dims'
    range before it compares them as given."""
    check_error(lambda lib, x: lib.rot90(x, 1, (0, 3)), rand(2, 2, 2))
    check_error(lambda lib, x: lib.rot90(x, 1, (0, -2)), rand(2, 2))
    check_error(lambda lib, x: x.repeat(-1, 1, 1, -4), rand(1, 1, 1))
    check_error(lambda lib: lib.logcumsumexp(lib.tensor([1, 2]), 1))


def test_einsum_dims_of_size_one_and_empty_operands():
    """einsum contracts a dim where it last is not 1 (torch's dim_last_op): bool operands of size-1 dims stay bool
    through a mul; a bmm with nothing to multiply takes no dtype check and gives the right operand's dtype."""
    check(lambda lib: lib.einsum("a,a->", lib.tensor([True]), lib.tensor([True])))
    check(lambda lib: lib.einsum("ab,b->a", lib.tensor([[True]]), lib.tensor([True])))
    check(lambda lib: lib.einsum("abc,c->ab", lib.zeros(0, 4, 3, dtype=lib.int64), lib.ones(3)))
    check(lambda lib, x: lib.einsum("ab,b->a", x, lib.ones(4)), np.zeros((0, 4)))
    check(lambda lib, x: lib.einsum("ab,bc->ac", x, lib.ones(0, 3, dtype=lib.float64)), rand(2, 0))
    check(lambda lib: lib.einsum("ab,bfg->afg", lib.ones(1, 3, dtype=lib.bool), lib.zeros(3, 0, 1)))
    check_error(lambda lib, x: lib.einsum("ab,b->a", x, lib.ones(4, dtype=lib.int64)), np.zeros((0, 4)))
    check_error(lambda lib, x: lib.einsum("ab,bf->af", lib.ones(4, 2, dtype=lib.bool), x), rand(2, 2))
    check_error(lambda lib: lib.einsum("ab,bf->af", lib.ones(2, 2, dtype=lib.int64), lib.ones(2, 2)))


def test_einsum_mixed_dtypes_name_bmms_path():
    """einsum's bmm words a dtype mismatch by its path (a plain loop below 400 products, BLAS above), and torch swaps
    the operands when the right one's output dims come first."""
    for a, b in (("float32", "bool"), ("bool", "float32"), ("int64", "float64"), ("float32", "float64"),
                 ("float64", "int64")):
        for eq, s1, s2 in (("ab,bc->ac", (2, 4), (4, 1)), ("ab,bc->ac", (12, 3), (3, 12)),
                           ("abc,cfg->abfg", (3, 4, 3), (3, 4, 3)), ("abc,c->ab", (1, 2, 4), (4,))):
            check_error(lambda lib: lib.einsum(eq, lib.ones(*s1, dtype=getattr(lib, a)),
                                               lib.ones(*s2, dtype=getattr(lib, b))))


def test_scatter_reduce_bools():
    """scatter_reduce of bools: sum/prod/amax/amin are or/and/max/min (identities False/True without self); mean
    has no bool kernel, and with nothing to scatter its division is what refuses."""
    for reduce in ("sum", "prod", "amax", "amin"):
        for include_self in (True, False):
            check(lambda lib: lib.tensor([True, False, True]).scatter_reduce(
                0, lib.tensor([0, 0, 1]), lib.tensor([False, True, True]), reduce, include_self=include_self))
    check_error(lambda lib: lib.tensor([True]).scatter_reduce(0, lib.tensor([0]), lib.tensor([True]), "mean"))
    check_error(lambda lib: lib.tensor([True]).scatter_reduce(0, lib.tensor([], dtype=lib.int64),
                                                              lib.tensor([], dtype=lib.bool), "mean"))


def test_take_from_empty_and_index_fill_dim_first():
    """take from an empty tensor has its own message; index_fill checks its dim before its value."""
    check_error(lambda lib: lib.tensor([-4]).index_fill(1, lib.tensor([], dtype=lib.int64), float("nan")))
    check_error(lambda lib, x: lib.take(x, lib.tensor([1])), rand(0))
    check(lambda lib, x: lib.take(x, lib.tensor([], dtype=lib.int64)), rand(0))


def test_layouts_and_empty_shortcuts():
    """sort, argsort, flip (rot90 by 2) and index_fill keep a dense input's memory order, as torch's do (a later
    view then fails or works as in torch); roll of an empty tensor copies it before reading its dims; diff with n=0
    copies the input before reading its dim (prepend/append are only checked)."""
    t = rand(3, 4)
    check_error(lambda lib, x: x.t().sort(0).values.view(-1), t)
    check_error(lambda lib, x: x.t().argsort(0).view(-1), t)
    check_error(lambda lib, x: x.t().flip(0).view(-1), t)
    check_error(lambda lib, x: lib.rot90(x.t(), 2).view(-1), t)
    check_error(lambda lib, x: x.t().index_fill(0, lib.tensor([0]), 1.0).view(-1), t)
    check(lambda lib, x: x.t().msort().reshape(-1), t)
    check(lambda lib, x: lib.roll(x, (3, -2), (0, -2)), rand(0))
    check_error(lambda lib, x: lib.roll(x, (3, -2), (0,)), rand(0))
    check(lambda lib, x: lib.diff(x, n=0, dim=5), t)
    check(lambda lib, x, p: lib.diff(x, n=0, prepend=p), t, rand(3, 1))
    check_error(lambda lib, x, p: lib.diff(x, n=0, prepend=p), t, rand(2, 1))


def test_cumsum_saves_nothing_and_repeat_backward_as_torch():
    """cumsum's node saved its input and result, so an in-place write to them made backward raise where torch's
    (which saves neither) does not; repeat's backward reshaped the padded dims too, so an empty tile with a -1
    repeat failed with another shape in the message than torch's repeat_backward."""
    check(lambda lib, x: x.permute(1, 2, 0).cumsum(-1).zero_(), rand(0, 2, 0))
    check(lambda lib, x: x.cumsum(0).mul_(2), rand(3))
    check_error(lambda lib, x: lib.tile(lib.diff(x), (2, -1)).sum().backward(), rand(1))
    check(lambda lib, x: x.repeat(2, 1, 3), rand(2, 2))
    check(lambda lib, x: x.repeat(2, 0, 3), rand(2, 2))
