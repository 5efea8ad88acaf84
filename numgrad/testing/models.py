"""Comparing whole models and training loops with torch: compare_modules (one forward and backward of a
module whose state is copied from torch's) and compare_training (the same loop in both libraries, step by
step, reporting the first step and tensor where they part)."""
import numpy as np

import numgrad
from .compare import Difference, TorchComparison, _compare_tensor, _leaves, _to_numpy


def _torch():
    import torch
    return torch


def copy_state_from_torch(ng_module, torch_module):
    """Loads torch_module's state dict (parameters and buffers) into ng_module, by torch's key names."""
    state = {k: numgrad.tensor(v.detach().cpu().numpy()) for k, v in torch_module.state_dict().items()}
    ng_module.load_state_dict(state)


def _inputs(np_inputs, requires_grad):
    torch = _torch()
    ours, theirs = [], []
    for x in np_inputs:
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu().numpy()
        if isinstance(x, np.ndarray):
            want = requires_grad and x.dtype.kind == "f"
            ours.append(numgrad.tensor(np.array(x), requires_grad=want))
            theirs.append(torch.tensor(np.array(x), requires_grad=want))
        else:
            ours.append(x)
            theirs.append(x)
    return ours, theirs


def _compare_grads(report, ng_module, torch_module, rtol, atol, prefix=""):
    ours = dict(ng_module.named_parameters())
    for name, t in torch_module.named_parameters():
        where = f"{prefix}grad of {name}"
        o = ours.get(name)
        if o is None:
            report.differences.append(Difference(where, "missing", "numgrad's module has no such parameter"))
        elif (o.grad is None) != (t.grad is None):
            report.differences.append(Difference(where, "grad", f"torch {'None' if t.grad is None else 'a tensor'}, "
                                                                f"numgrad {'None' if o.grad is None else 'a tensor'}"))
        elif t.grad is not None:
            _compare_tensor(report, where, o.grad, t.grad, rtol, atol, True, True)


def compare_modules(ng_module, torch_module, *inputs, rtol=None, atol=None, grad_rtol=None, grad_atol=None,
                    check_repr=True, seed=0, raise_exception=True):
    """Copies torch_module's state into ng_module, runs both on the same inputs (NumPy arrays or torch
    tensors; floating ones get requires_grad), and compares the outputs, a backward from a random-weighted sum
    of them (the inputs' and every parameter's gradient) and the modules' printed forms. Returns the
    TorchComparison (falsy when they differ), or raises AssertionError with it (raise_exception)."""
    torch = _torch()
    copy_state_from_torch(ng_module, torch_module)
    report = TorchComparison()
    if check_repr and repr(ng_module) != repr(torch_module):
        report.differences.append(Difference("module", "repr", f"torch:\n{torch_module!r}\nnumgrad:\n{ng_module!r}"))
    ours_in, theirs_in = _inputs(inputs, True)
    ours, theirs = ng_module(*ours_in), torch_module(*theirs_in)
    pairs = [(o, t) for o, t in zip(_leaves(ours), _leaves(theirs))]
    if len(_leaves(ours)) != len(_leaves(theirs)):
        report.differences.append(Difference("outputs", "count", f"torch {len(_leaves(theirs))}, numgrad "
                                                                  f"{len(_leaves(ours))}"))
    for k, (o, t) in enumerate(pairs):
        _compare_tensor(report, f"output {k}", o, t, rtol, atol, True, True)
    grad_rtol, grad_atol = (rtol, atol) if grad_rtol is None and grad_atol is None else (grad_rtol, grad_atol)
    diff = [(o, t) for o, t in pairs if isinstance(t, torch.Tensor) and t.requires_grad]
    if report.ok and diff:
        rng = np.random.default_rng(seed)
        weights = [rng.standard_normal(tuple(t.shape)).astype(_to_numpy(t)[0].dtype) for _, t in diff]
        torch.autograd.backward([t for _, t in diff], [torch.tensor(w) for w in weights])
        numgrad.autograd.backward([o for o, _ in diff], [numgrad.tensor(w) for w in weights])
        for k, (o, t) in enumerate(zip(ours_in, theirs_in)):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                _compare_tensor(report, f"grad of input {k}", o.grad, t.grad, grad_rtol, grad_atol, True, True)
        _compare_grads(report, ng_module, torch_module, grad_rtol, grad_atol)
    if not report.ok and raise_exception:
        raise AssertionError(str(report))
    return report


class TrainingComparison(TorchComparison):
    """compare_training's report: also the first step where the libraries part (None when they never do)."""

    first_step = None
    steps = 0

    def __str__(self):
        if not self.ok or not self.max_abs_errors:
            return super().__str__()
        where, err = max(self.max_abs_errors.items(), key=lambda kv: kv[1])
        return f"numgrad matches torch over {self.steps} steps (largest abs error {err:.3g}, {where})"


def compare_training(step_fn, steps=5, *, model, optimizer, inputs=(), rtol=None, atol=None, raise_exception=True):
    """Trains the same model in both libraries and compares them after every step. `model(lib)` builds the
    module (numgrad's gets torch's initial state), `optimizer(lib, parameters)` its optimizer, `inputs` is a
    tuple of NumPy arrays or a function of the step number giving one, and `step_fn(lib, model, optimizer,
    *inputs)` runs one step and returns the loss. The report names the first step and tensor where the runs
    part beyond tolerance: the loss, a parameter, a gradient or an entry of the optimizer's state."""
    torch = _torch()
    t_model, ng_model = model(torch), model(numgrad)
    copy_state_from_torch(ng_model, t_model)
    t_opt, ng_opt = optimizer(torch, t_model.parameters()), optimizer(numgrad, ng_model.parameters())
    report = TrainingComparison()
    for step in range(steps):
        arrays = inputs(step) if callable(inputs) else inputs
        ours_in, theirs_in = _inputs(arrays, False)
        ours, theirs = step_fn(numgrad, ng_model, ng_opt, *ours_in), step_fn(torch, t_model, t_opt, *theirs_in)
        where = f"step {step}: "
        _compare_tensor(report, where + "loss", ours, theirs, rtol, atol, True, True)
        ng_params = dict(ng_model.named_parameters())
        for name, p in t_model.named_parameters():
            _compare_tensor(report, where + f"parameter {name}", ng_params[name].detach(), p.detach(), rtol, atol,
                            True, True)
        _compare_grads(report, ng_model, t_model, rtol, atol, prefix=where)
        _compare_optimizer_state(report, where, ng_opt, t_opt, rtol, atol)
        report.steps = step + 1
        if not report.ok:
            report.first_step = step
            break
    if not report.ok and raise_exception:
        raise AssertionError(str(report))
    return report


def _compare_optimizer_state(report, where, ng_opt, t_opt, rtol, atol):
    torch = _torch()
    ours, theirs = ng_opt.state_dict()["state"], t_opt.state_dict()["state"]
    if sorted(ours) != sorted(theirs):
        report.differences.append(Difference(where + "optimizer state", "keys", f"torch {sorted(theirs)}, numgrad "
                                                                                f"{sorted(ours)}"))
        return
    for index, entries in theirs.items():
        for key, value in entries.items():
            mine = ours[index].get(key)
            label = f"{where}optimizer state[{index}][{key!r}]"
            if isinstance(value, torch.Tensor):
                _compare_tensor(report, label, mine, value, rtol, atol, False, True)
            elif mine != value:
                report.differences.append(Difference(label, "value", f"torch {value!r}, numgrad {mine!r}"))
