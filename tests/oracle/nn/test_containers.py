"""Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict against torch: the same list and dict
operations on both, compared by printed form, parameter names and shapes, results and errors."""
import collections

import numpy as np
import pytest
import torch

import numgrad
from helpers.nn_compare import compare_grads, twin


def _lin(lib, n):
    return lib.nn.Linear(n, n + 1)


def _state(module):
    return [(name, tuple(p.shape)) for name, p in module.named_parameters()]


def _sequential_ops(lib):
    s = lib.nn.Sequential(_lin(lib, 1), lib.nn.ReLU(), _lin(lib, 2))
    out = [repr(s), len(s), type(s[1]).__name__, type(s[-1]).__name__, repr(s[1:])]
    s.append(_lin(lib, 3)).insert(1, lib.nn.Tanh()).insert(-1, lib.nn.Sigmoid())
    out += [repr(s), _state(s)]
    popped = s.pop(1)
    del s[0]
    del s[1:3]
    out += [type(popped).__name__, repr(s), list(s._modules)]
    s.extend(lib.nn.Sequential(lib.nn.ReLU()))
    s[0] = lib.nn.GELU()
    out += [repr(s), repr(s + lib.nn.Sequential(_lin(lib, 4))), repr(s * 2), repr(2 * s)]
    s += lib.nn.Sequential(lib.nn.Tanh())
    s *= 2
    out += [repr(s), [n for n in dir(s) if n.isdigit()]]
    named = lib.nn.Sequential(collections.OrderedDict([("first", _lin(lib, 2)), ("act", lib.nn.ReLU())]))
    out += [repr(named), repr(named[0:1]), _state(named)]
    return out


def _module_list_ops(lib):
    m = lib.nn.ModuleList([_lin(lib, 1), _lin(lib, 1), lib.nn.ReLU(), lib.nn.ReLU(), lib.nn.ReLU(), _lin(lib, 2)])
    out = [repr(m), len(m), type(m[-1]).__name__, repr(m[1:3])]
    m.insert(0, lib.nn.Tanh())
    m.append(lib.nn.GELU())
    m.extend([lib.nn.Sigmoid()])
    m += [lib.nn.Tanh()]
    out += [repr(m), _state(m)]
    out += [type(m.pop(2)).__name__, type(m.pop(-1)).__name__]
    del m[::2]
    m[0] = lib.nn.Sigmoid()
    out += [repr(m), list(m._modules), repr(m + lib.nn.ModuleList([lib.nn.ReLU()])), repr(lib.nn.ModuleList())]
    return out


def _module_dict_ops(lib):
    d = lib.nn.ModuleDict({"b": _lin(lib, 1), "a": lib.nn.ReLU()})
    out = [repr(d), list(d), list(d.keys()), "a" in d, len(d)]
    d.update([("c", lib.nn.Tanh())])
    d.update(collections.OrderedDict([("z", _lin(lib, 2)), ("y", lib.nn.GELU())]))
    d["x"] = lib.nn.Sigmoid()
    out += [repr(d), _state(d), type(d.pop("a")).__name__]
    del d["c"]
    out += [[type(v).__name__ for v in d.values()], [k for k, _ in d.items()], repr(d)]
    d.clear()
    out += [repr(d), len(d)]
    return out


def _parameter_list_ops(lib):
    p = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(2, dtype=lib.float64), "text"])
    out = [repr(p), len(p), type(p[1]).__name__, p[1].requires_grad, _state(p)]
    p.append(lib.ones(4))
    p.extend([lib.nn.Parameter(lib.ones(1), requires_grad=False)])
    p += [lib.ones(5)]
    p[0] = lib.zeros(7)
    out += [repr(p), _state(p), repr(p[1:4]), [type(v).__name__ for v in p], [n for n in dir(p) if n.isdigit()]]
    return out


def _parameter_dict_ops(lib):
    p = lib.nn.ParameterDict({"w": lib.nn.Parameter(lib.ones(2, 3)), "b": lib.zeros(3), "note": "x"})
    out = [repr(p), list(p), len(p), "w" in p, type(p["b"]).__name__, _state(p)]
    p.update([("c", lib.ones(4, dtype=lib.float64))])
    p["d"] = lib.ones(1)
    out += [repr(p), list(reversed(p)), p.get("missing", 5), type(p.setdefault("e", lib.ones(2))).__name__]
    out += [p.popitem()[0], type(p.pop("w")).__name__, repr(p), list(p.keys()), [k for k, _ in p.items()]]
    merged = p | lib.nn.ParameterDict({"z": lib.ones(2)})
    out += [repr(merged), repr(p.copy()), repr(p.fromkeys(["q", "r"])), len(list(p.values()))]
    p |= lib.nn.ParameterDict({"y": lib.ones(2)})
    out += [repr(p)]
    p.clear()
    out += [repr(p), len(p)]
    return out


@pytest.mark.parametrize("ops", [_sequential_ops, _module_list_ops, _module_dict_ops, _parameter_list_ops,
                                 _parameter_dict_ops], ids=lambda f: f.__name__.strip("_"))
def test_container_operations_match_torch(ops):
    assert ops(numgrad) == ops(torch)


def test_containers_train_as_torch():
    """A Sequential built by appending, scaled by a ParameterList's entry, gives torch's gradients."""
    def build(lib):
        body = lib.nn.Sequential(lib.nn.Linear(3, 4)).append(lib.nn.Tanh())
        return lib.nn.ModuleDict({"body": body, "scales": lib.nn.ParameterList([lib.ones(4) * 0.5])})
    ours, theirs = twin(build)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    for lib, model in ((numgrad, ours), (torch, theirs)):
        (model["body"](lib.tensor(x)) * model["scales"][0]).sum().backward()
    assert [n for n, _ in ours.named_parameters()] == ["body.0.weight", "body.0.bias", "scales.0"]
    compare_grads(ours, theirs)


ERRORS = [
    lambda lib: lib.nn.Sequential(lib.nn.ReLU())[3],
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()) + lib.nn.ModuleList(),
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()) * 0,
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()).insert(5, lib.nn.ReLU()),
    lambda lib: lib.nn.Sequential({"a": lib.nn.ReLU()}),
    lambda lib: lib.nn.ModuleList([lib.nn.ReLU()])[-2],
    lambda lib: lib.nn.ModuleList().extend(3),
    lambda lib: lib.nn.ModuleDict().update(3),
    lambda lib: lib.nn.ModuleDict().update([("a", lib.nn.ReLU(), 1)]),
    lambda lib: lib.nn.ModuleDict().update([3]),
    lambda lib: lib.nn.ParameterList().extend(lib.ones(2)),
    lambda lib: lib.nn.ParameterList()[0],
    lambda lib: lib.nn.ParameterList()(1),
    lambda lib: lib.nn.ParameterDict()(1),
    lambda lib: lib.nn.ParameterDict()[1],
    lambda lib: lib.nn.ParameterDict().update(3),
    lambda lib: lib.nn.ParameterDict().update([("a",)]),
    lambda lib: lib.nn.ParameterDict()["missing"],
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_container_errors_match_torch(case):
    outcomes = []
    for lib in (numgrad, torch):
        with pytest.raises(Exception) as info:
            ERRORS[case](lib)
        outcomes.append((type(info.value), str(info.value).replace("torch.nn.modules", "MOD").replace(
            "numgrad.nn.modules", "MOD").replace("numgrad", "torch")))
    assert outcomes[0] == outcomes[1]


def test_identity_flatten_unflatten_in_sequential_match_torch():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    outs = []
    for lib in (numgrad, torch):
        model = lib.nn.Sequential(lib.nn.Identity(54, unused=1), lib.nn.Flatten(), lib.nn.Unflatten(1, (4, 3)))
        outs.append((repr(model), model(lib.tensor(x)).numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
