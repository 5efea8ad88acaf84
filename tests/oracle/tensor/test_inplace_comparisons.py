"""In-place comparisons and the in-place aliases (eq_, gt_, logical_and_, greater_, subtract_, ...): torch has them
and numgrad had none; and numgrad had maximum_/minimum_, which torch has not."""
import numpy as np
import pytest

from helpers.autograd_compare import same_outcome

COMPARISONS = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_", "less_equal_",
               "not_equal_", "logical_and_", "logical_or_", "logical_xor_"]
OTHERS = {"tensor": lambda lib: lib.tensor([1.0, 0.0, 3.0]), "float": 2.0, "bool": True,
          "int tensor": lambda lib: lib.tensor([1, 0, 3]), "wider": lambda lib: lib.ones(2, 3)}


@pytest.mark.parametrize("other", list(OTHERS))
@pytest.mark.parametrize("op", COMPARISONS)
def test_in_place_comparison_values_history_and_gradients(op, other):
    def run(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = a * 1
        value = OTHERS[other](lib) if callable(OTHERS[other]) else OTHERS[other]
        y = getattr(x, op)(value)
        fn = y.grad_fn
        seen = (y.detach().numpy().tolist(), str(y.dtype), type(fn).__name__, len(fn.next_functions))
        y.sum().backward()
        return seen, a.grad
    same_outcome(run)


@pytest.mark.parametrize("self_dtype", ["int64", "bool", "float64"])
@pytest.mark.parametrize("op", COMPARISONS)
def test_in_place_comparison_writes_into_any_dtype(op, self_dtype):
    def run(lib):
        t = lib.tensor(np.array([1, 0, 2]).astype(self_dtype))
        return getattr(t, op)(lib.tensor([1.5, 0.0, 2.0]))
    same_outcome(run)


@pytest.mark.parametrize("op", COMPARISONS)
def test_in_place_comparison_refusals(op):
    same_outcome(lambda lib: getattr(lib.ones(2, requires_grad=True), op)(lib.ones(2)))  # a leaf requiring grad
    same_outcome(lambda lib: getattr(lib.ones(1).expand(3), op)(lib.ones(3)))  # internal overlap
    same_outcome(lambda lib: getattr(lib.ones(2, 1), op)(lib.ones(2, 3)))  # broadcast beyond self


@pytest.mark.parametrize("op", ["subtract_", "multiply_", "divide_", "true_divide_"])
def test_in_place_aliases(op):
    same_outcome(lambda lib: getattr(lib.tensor([1.0, 2.0]), op)(lib.tensor([2.0, 4.0])))
    same_outcome(lambda lib: getattr(lib.tensor([1, 2]), op)(2))


def test_no_in_place_maximum_or_minimum():
    same_outcome(lambda lib: lib.ones(2).maximum_(lib.ones(2)))
    same_outcome(lambda lib: lib.ones(2).minimum_(lib.ones(2)))
