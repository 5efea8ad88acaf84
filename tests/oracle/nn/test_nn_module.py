"""nn.Parameter and nn.Module against torch: registration, traversal order, state_dict keys and errors,
modes, freezing, zero_grad, dtype moves, hooks and reprs."""
import copy
import pickle

import numpy as np
import pytest
import torch

import numgrad
from helpers.nn_compare import rand, to_numgrad_state, twin


def build_net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.BatchNorm1d(8), nn.Dropout(0.2),
                         nn.Sequential(nn.Linear(8, 8, bias=False), nn.Tanh()), nn.LayerNorm(8), nn.Linear(8, 3))


class Net:
    """A user-defined module as in the seed tutorials: attributes, a buffer, a shared submodule."""

    @staticmethod
    def make(lib):
        class Model(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = lib.nn.Linear(3, 5)
                self.act = lib.nn.ReLU()
                self.fc2 = lib.nn.Linear(5, 2)
                self.scale = lib.nn.Parameter(lib.ones(2))
                self.register_buffer("steps", lib.zeros(1))
                self.register_buffer("cache", lib.zeros(2), persistent=False)

            def forward(self, x):
                return self.fc2(self.act(self.fc1(x))) * self.scale
        return Model()


def test_parameter_defaults_and_repr():
    for requires_grad in (True, False):
        ours = numgrad.nn.Parameter(numgrad.tensor([1.0, 2.0]), requires_grad=requires_grad)
        theirs = torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=requires_grad)
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
        assert ours.requires_grad is requires_grad and ours.is_leaf
    ours = numgrad.nn.Parameter(numgrad.tensor([1.0], dtype=numgrad.float64))
    assert repr(ours) == repr(torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64)))
    assert isinstance(ours, numgrad.Tensor)
    assert type(ours * 2) is numgrad.Tensor  # results of ops are plain tensors, as in torch
    assert numgrad.nn.Parameter().shape == torch.nn.Parameter().shape


def test_parameter_shares_storage_and_copies():
    t = numgrad.zeros(3)
    p = numgrad.nn.Parameter(t)
    t._data[0] = 5.0
    assert p[0].item() == 5.0
    for clone in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert isinstance(clone, numgrad.nn.Parameter) and clone.requires_grad
        assert clone.tolist() == p.tolist() and clone.data_ptr() != p.data_ptr()


def test_integer_parameter_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        numgrad.nn.Parameter(numgrad.tensor([1, 2]))


def test_registration_order_and_traversal_match_torch():
    ours, theirs = Net.make(numgrad), Net.make(torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert len(list(ours.parameters())) == 5 and len(list(ours.buffers())) == 2
    assert [type(m).__name__ for m in ours.modules()] == [type(m).__name__ for m in theirs.modules()]
    assert list(ours.children())[1] is ours.act


def test_nested_state_dict_keys_match_torch():
    ours, theirs = build_net(numgrad), build_net(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.state_dict()["2.num_batches_tracked"].dtype == numgrad.int64
    sd = ours.state_dict()
    assert not any(v.requires_grad for v in sd.values())
    assert all(v.requires_grad for k, v in ours.state_dict(keep_vars=True).items() if "running" not in k and
               "num_batches" not in k)


def test_shared_module_counted_once():
    for lib in (numgrad, torch):
        shared = lib.nn.Linear(2, 2)
        seq = lib.nn.Sequential(shared, shared)
        assert len(list(seq.parameters())) == 2
        assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_load_state_dict_roundtrip_and_result_repr():
    ours, theirs = twin(build_net)
    for (k, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    result = ours.load_state_dict(ours.state_dict())
    assert repr(result) == repr(theirs.load_state_dict(theirs.state_dict())) == "<All keys matched successfully>"


def _error(lib, module, state, strict=True):
    with pytest.raises(Exception) as info:
        module.load_state_dict(state, strict=strict)
    return info.type, str(info.value)


@pytest.mark.parametrize("edit", ["missing", "unexpected", "both", "size", "nested"])
def test_load_state_dict_errors_match_torch(edit):
    def state(lib, module):
        sd = dict(module.state_dict())
        if edit in ("missing", "both"):
            del sd["0.bias"]
        if edit in ("unexpected", "both"):
            sd["0.extra"] = lib.ones(1)
        if edit == "size":
            sd["0.weight"] = lib.ones(3, 4)
        if edit == "nested":
            sd["4.1.weight"] = lib.ones(1)
        return sd
    ours, theirs = build_net(numgrad), build_net(torch)
    assert _error(numgrad, ours, state(numgrad, ours)) == _error(torch, theirs, state(torch, theirs))


def test_load_state_dict_not_strict_reports_keys():
    ours, theirs = numgrad.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    r1 = ours.load_state_dict({"weight": numgrad.ones(2, 2), "junk": numgrad.ones(1)}, strict=False)
    r2 = theirs.load_state_dict({"weight": torch.ones(2, 2), "junk": torch.ones(1)}, strict=False)
    assert (r1.missing_keys, r1.unexpected_keys) == (r2.missing_keys, r2.unexpected_keys)
    assert repr(r1) == repr(r2)
    assert ours.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_load_state_dict_is_invisible_to_autograd_and_keeps_objects():
    m = numgrad.nn.Linear(2, 2)
    w = m.weight
    m.load_state_dict({"weight": np.ones((2, 2), np.float32), "bias": np.zeros(2, np.float32)})
    assert m.weight is w and w.is_leaf and w.grad_fn is None and w.requires_grad


def test_train_eval_propagate():
    ours, theirs = build_net(numgrad), build_net(torch)
    for mode in ("eval", "train"):
        assert getattr(ours, mode)() is ours
        getattr(theirs, mode)()
        assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        ours.train("no")


def test_requires_grad_freezes_parameters_and_keeps_their_grad():
    ours, theirs = twin(build_net)
    x = rand(6, 4)
    for lib, m in ((numgrad, ours), (torch, theirs)):
        m(lib.tensor(x)).sum().backward()
        frozen_before = m[0].weight.grad.clone()
        assert m[0].requires_grad_(False) is m[0]
        m.zero_grad(set_to_none=False)
        m[0].weight.grad = frozen_before.clone()
        m(lib.tensor(x)).sum().backward()
        assert not m[0].weight.requires_grad
        assert m[0].weight.grad.tolist() == frozen_before.tolist()  # untouched by the second backward
        assert m[-1].weight.grad.abs().sum().item() > 0


def test_zero_grad_set_to_none_and_zeros():
    for lib in (numgrad, torch):
        m = lib.nn.Linear(3, 2)
        m(lib.ones(1, 3)).sum().backward()
        m.zero_grad(set_to_none=False)
        assert m.weight.grad.tolist() == [[0.0] * 3] * 2
        m.zero_grad()
        assert m.weight.grad is None


def test_to_dtype_keeps_parameter_objects():
    ours = build_net(numgrad)
    w = ours[0].weight
    assert ours.double() is ours
    assert ours[0].weight is w and w.dtype == numgrad.float64 and isinstance(w, numgrad.nn.Parameter)
    assert ours[2].num_batches_tracked.dtype == numgrad.int64  # integer buffers keep their dtype
    assert ours.to("cpu") is ours and ours.to(numgrad.float32)[0].weight.dtype == numgrad.float32
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):  # torch's CPU build
        ours.to("cuda")
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        ours.to(numgrad.int64)


def test_forward_hooks_and_pre_hooks():
    calls = []
    for lib in (numgrad, torch):
        m = lib.nn.Linear(2, 2)
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
        x = lib.ones(1, 2)
        with lib.no_grad():
            y = m(x)
            expected = (x * 2) @ m.weight.T + m.bias + 1
            calls.append(np.allclose(y.numpy(), expected.numpy()))
            h1.remove()
            h2.remove()
            calls.append(np.allclose(m(x).numpy(), (x @ m.weight.T + m.bias).numpy()))
    assert all(calls)


def test_assignment_rules_match_torch():
    for lib in (numgrad, torch):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'weight' "
                                            r"\(torch.nn.Parameter or None expected\)"):
            m.weight = lib.ones(2, 2)
        m.weight = None
        assert [n for n, _ in m.named_parameters()] == ["bias"]
        m.extra = lib.nn.Parameter(lib.ones(1))
        assert [n for n, _ in m.named_parameters()] == ["bias", "extra"]
        del m.extra
        assert [n for n, _ in m.named_parameters()] == ["bias"]
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nothing'"):
            m.nothing
        with pytest.raises(KeyError):
            m.register_buffer("a.b", lib.ones(1))


def test_module_without_forward():
    for lib in (numgrad, torch):
        with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
            lib.nn.Module()(lib.ones(1))


def test_reprs_match_torch():
    assert repr(build_net(numgrad)) == repr(build_net(torch))
    assert repr(Net.make(numgrad)).replace("numgrad", "torch") == repr(Net.make(torch))
    for make in (lambda nn: nn.Conv2d(3, 8, 3, padding="same"), lambda nn: nn.Conv2d(3, 8, (1, 3), stride=(2, 1)),
                 lambda nn: nn.BatchNorm1d(4, affine=False, momentum=None), lambda nn: nn.LayerNorm([2, 3]),
                 lambda nn: nn.Embedding(10, 3, padding_idx=-1), lambda nn: nn.ReLU(inplace=True),
                 lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True), lambda nn: nn.CrossEntropyLoss(),
                 lambda nn: nn.Linear(2, 3, bias=False), lambda nn: nn.BatchNorm2d(3)):
        assert repr(make(numgrad.nn)) == repr(make(torch.nn))


def test_sequential_indexing():
    ours, theirs = build_net(numgrad), build_net(torch)
    assert len(ours) == len(theirs) == 7
    assert type(ours[-1]).__name__ == "Linear" and ours[-1] is ours[6]
    assert repr(ours[1:3]) == repr(theirs[1:3])
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs]
    with pytest.raises(IndexError, match="index 7 is out of range"):
        ours[7]
    del ours[1]
    del theirs[1]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.append(numgrad.nn.ReLU())
    theirs.append(torch.nn.ReLU())
    assert repr(ours) == repr(theirs)


def test_module_list_and_dict():
    for lib in (numgrad, torch):
        layers = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)])
        assert len(layers) == 3 and len(list(layers.parameters())) == 6
        d = lib.nn.ModuleDict({"a": lib.nn.Linear(1, 1)})
        assert list(d.state_dict()) == ["a.weight", "a.bias"]


def test_apply_and_get_submodule():
    ours = build_net(numgrad)
    seen = []
    ours.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Sequential" and seen[0] == "Linear"
    assert ours.get_submodule("4.0") is ours[4][0]


def test_state_dict_from_numpy_of_torch_state():
    theirs = build_net(torch)
    ours = build_net(numgrad)
    ours.load_state_dict(to_numgrad_state(theirs))
    with torch.no_grad():
        theirs.eval()
    ours.eval()
    x = rand(5, 4)
    np.testing.assert_allclose(ours(numgrad.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
