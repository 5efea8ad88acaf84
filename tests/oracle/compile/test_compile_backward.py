"""numgrad.compile with the backward outside the compiled call (compile(model), then loss.backward()): the
results hang on a CompiledFunctionBackward that replays the recorded backward. Against eager numgrad bit for
bit (.grad, parameters, errors and their messages) and against torch (values within tolerance)."""
import numpy as np
import pytest
import torch

import numgrad
from oracle.compile.test_compile import _batches, _mlp

F = numgrad.nn.functional


def _train_outside(lib, compiled, steps=4, optimizer="sgd"):
    model = _mlp(lib)
    call = (numgrad.compile(model) if lib is numgrad else torch.compile(model)) if compiled else model
    opt = (lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9) if optimizer == "sgd" else
           lib.optim.Adam(model.parameters(), lr=1e-2))
    losses, grads = [], []
    for x, y in _batches(steps):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(call(lib.tensor(x)), lib.tensor(y))
        loss.backward()
        grads.append([p.grad.detach().numpy().copy() for p in model.parameters()])
        opt.step()
        losses.append(loss.item())
    return model, call, losses, grads


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_module_forward_compiled_backward_outside_matches_eager_and_torch(optimizer):
    model, call, losses, grads = _train_outside(numgrad, True, optimizer=optimizer)
    ref_model, _, ref_losses, ref_grads = _train_outside(numgrad, False, optimizer=optimizer)
    assert call._compiled.eager_reason is None and call._compiled.variants[0].hits == 3
    assert losses == ref_losses
    for got, want in zip(grads, ref_grads):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    _, _, torch_losses, torch_grads = _train_outside(torch, False, optimizer=optimizer)
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-5)
    for got, want in zip(grads, torch_grads):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


def test_result_grad_fn_and_a_second_backward():
    w = numgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    fn = numgrad.compile(lambda x: (x * w).exp())
    x = numgrad.tensor([0.5, 0.25, 0.0])
    for call in range(3):
        w.grad = None
        out = fn(x)
        assert out.grad_fn.name() == "CompiledFunctionBackward" and out.requires_grad and not out.is_leaf
        out.sum().backward(retain_graph=True)
        out.sum().backward()  # the graph kept once: a second backward accumulates
        np.testing.assert_array_equal(w.grad.numpy(), 2 * (x * (x * w).exp()).detach().numpy())
        with pytest.raises(RuntimeError) as got:
            out.sum().backward()
        eager = (x * w).exp()
        eager.sum().backward()
        with pytest.raises(RuntimeError) as want:
            eager.sum().backward()
        assert str(got.value) == str(want.value)
    assert fn.variants[0].hits == 2


def test_results_still_waiting_for_their_backward_make_the_next_call_run_eager():
    model = _mlp(numgrad)
    reference = _mlp(numgrad)
    call = numgrad.compile(model)
    (x0, _), (x1, _) = _batches(2)
    first, second = call(numgrad.tensor(x0)), call(numgrad.tensor(x1))  # the second runs eager: first's
    assert second.grad_fn.name() != "CompiledFunctionBackward"  # backward reads the tape's buffers
    (first.sum() + 2 * second.sum()).backward()
    (reference(numgrad.tensor(x0)).sum() + 2 * reference(numgrad.tensor(x1)).sum()).backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    del first, second
    assert call(numgrad.tensor(x0)).grad_fn.name() == "CompiledFunctionBackward"  # replays again


def _saved_parameter_changed(compiled):
    lin = numgrad.nn.Linear(3, 2)
    call = numgrad.compile(lin) if compiled else lin
    x = numgrad.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    errors = []
    for _ in range(2):  # the trace, then a replay
        out = (call(x) ** 2).sum()  # mm saves x and the weight's transpose
        with numgrad.no_grad():
            x.mul_(1.0)
        try:
            out.backward()
        except RuntimeError as e:
            errors.append(str(e))
    return errors


def test_an_in_place_write_between_forward_and_backward_raises_eager_error():
    got, want = _saved_parameter_changed(True), _saved_parameter_changed(False)
    assert len(want) == 2 and got == want


def test_an_in_place_write_to_a_saved_result_raises_eager_error():
    def run(compiled):
        w = numgrad.tensor([1.0, 2.0], requires_grad=True)
        fn = numgrad.compile(lambda t: (t * 2).exp()) if compiled else (lambda t: (t * 2).exp())
        errors = []
        for _ in range(2):
            out = fn(w)  # exp saves its result
            out.add_(1)
            try:
                out.sum().backward()
            except RuntimeError as e:
                errors.append(str(e))
        return errors
    got, want = run(True), run(False)
    assert len(want) == 2 and got == want
    assert "modified by an inplace operation" in got[1]


def test_double_backward_raises_torch_compile_error():
    w = numgrad.tensor([1.0, 2.0], requires_grad=True)
    out = numgrad.compile(lambda t: (t ** 3).sum())(w)
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        numgrad.autograd.grad(out, w, create_graph=True)
    (g,) = numgrad.autograd.grad(numgrad.compile(lambda t: (t ** 3).sum())(w), w)
    np.testing.assert_array_equal(g.numpy(), np.array([3.0, 12.0], np.float32))


def test_only_the_results_given_a_gradient_reach_their_leaves():
    """A result without a gradient adds nothing: its leaf's .grad stays None, and 0 * inf is no NaN."""
    def fn(a, b):
        return a * 3, b.log(), (a * b).sum()

    def run(compiled):
        a = numgrad.tensor([1.0, 2.0], requires_grad=True)
        b = numgrad.tensor([0.0, 1.0], requires_grad=True)
        f = numgrad.compile(fn) if compiled else fn
        out = []
        for which in (0, 0, 2, 1, 1):
            a.grad = b.grad = None
            res = f(a, b)
            res[which].sum().backward()
            out.append([None if t.grad is None else t.grad.numpy().tolist() for t in (a, b)])
        return out
    assert run(True) == run(False)
    assert run(True)[0] == [[3.0, 3.0], None]


def test_gradients_flow_into_an_argument_history_made_outside():
    w = numgrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
    head = numgrad.nn.Linear(3, 1)
    call = numgrad.compile(head)
    for step in range(3):
        w.grad = None
        head.zero_grad()
        h = (w * (step + 1)).tanh().unsqueeze(0)  # a new history each step: a new argument object
        call(h).sum().backward()
        want = head.weight.detach()[0] * (1 - (w * (step + 1)).tanh() ** 2) * (step + 1)
        np.testing.assert_allclose(w.grad.numpy(), want.detach().numpy(), rtol=1e-6)


def test_a_hook_in_the_graph_runs_eager():
    seen = []

    def fn(x):
        y = x * 2
        y.register_hook(lambda g: seen.append(1))
        return y.sum()

    x = numgrad.tensor([1.0, 2.0], requires_grad=True)
    compiled = numgrad.compile(fn)
    for _ in range(2):
        compiled(x).backward()
    assert seen == [1, 1] and compiled.eager_reason is not None


def test_eval_under_no_grad_and_training_share_the_module():
    model = _mlp(numgrad)
    reference = _mlp(numgrad)
    call = numgrad.compile(model)
    for x, y in _batches(3):
        with numgrad.no_grad():
            np.testing.assert_array_equal(call(numgrad.tensor(x)).numpy(), reference(numgrad.tensor(x)).numpy())
        for m in (call, reference):
            F.cross_entropy(m(numgrad.tensor(x)), numgrad.tensor(y)).backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert len(call._compiled.variants) == 2 and all(v.hits == 2 for v in call._compiled.variants)


@pytest.mark.parametrize("grad_mode", ["no_grad inside", "base needs no grad"])
def test_a_returned_view_of_a_tensor_from_before_the_call_stays_its_view(grad_mode):
    """Compile fuzz, seed 13, program 1052: a view without history of a tensor from before the call (made under
    no_grad of a leaf that requires grad, or of a tensor that needs none) came back as a copy with
    requires_grad False, so backward through it raised where eager and torch do not. It is now the same view
    at each replay: requires_grad as the base says, the base's memory and version counter."""
    def run(lib, compiled):
        leaf = lib.tensor(np.arange(6.0).reshape(3, 2, 1), requires_grad=grad_mode == "no_grad inside")

        def f(x):
            if grad_mode == "no_grad inside":
                with lib.no_grad():
                    v = x.permute(2, 1, 0)
            else:
                v = x.permute(2, 1, 0)
            return [v, v * 2]
        call = numgrad.compile(f) if compiled else f
        seen = []
        for k in range(3):
            v, w = call(leaf)
            seen.append((v.requires_grad, v.grad_fn is None, w.requires_grad, v.detach().numpy().copy(),
                         w.detach().numpy().copy()))
            if v.requires_grad:
                v.sum().backward()  # no error: its gradient flows nowhere
                seen.append(None if leaf.grad is None else leaf.grad.numpy().copy())
            with lib.no_grad():
                leaf.add_(1.0)  # through the view too, as eager's: one memory, one version counter
            seen.append((v._version == leaf._version, v.detach().numpy().copy()))
        return seen, call

    eager, _ = run(numgrad, False)
    compiled, call = run(numgrad, True)
    reference, _ = run(torch, False)
    assert sum(v.hits for v in call.variants) >= 1  # replayed (a call while results await backward runs eager)
    for ours, theirs in ((compiled, eager), (eager, reference)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            if a is None or b is None or isinstance(a, np.ndarray):
                assert (a is None) == (b is None)
                continue
            assert [x for x in a if not isinstance(x, np.ndarray)] == [x for x in b if not isinstance(x, np.ndarray)]
            for x, y in zip(a, b):
                if isinstance(x, np.ndarray):
                    np.testing.assert_array_equal(x, y)


def test_a_returned_view_made_a_leaf_inside_the_call_takes_its_gradient():
    """Compile fuzz, seed 11, program 785: a view of an argument made to require grad inside the call
    (requires_grad_) is a leaf of its own: backward outside the call fills its .grad, as eager's."""
    def run(compiled):
        x = numgrad.tensor(np.array([[[-0.5, 2.0], [2.0, -0.5], [0.5, -2.0]]]))

        def f(t):
            _, middle, _ = t.unbind(1)
            return middle.requires_grad_(True)
        call = numgrad.compile(f) if compiled else f
        grads = []
        for _ in range(3):
            v = call(x)
            (v * v).sum().backward()
            grads.append((v.requires_grad, v.is_leaf, v.grad.numpy().copy()))
        return grads
    for ours, theirs in zip(run(True), run(False)):
        assert ours[:2] == theirs[:2]
        np.testing.assert_array_equal(ours[2], theirs[2])
