"""numgrad.accelerator and numgrad.backends against torch (CPU build): availability, the flags scripts set and
read back (TF32, cuDNN, matmul precision, determinism) with torch's defaults, checks and messages."""
import warnings

import pytest
import torch

import numgrad
from numgrad.backends import _flags
from helpers.outcomes import outcome


@pytest.fixture(autouse=True)
def _restore_flags():
    """Both libraries' settings as they were before the test (they are process-wide)."""
    ours = dict(_flags.FLAGS)
    theirs = (torch.get_float32_matmul_precision(), torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark,
              torch.backends.cudnn.deterministic, torch.backends.cudnn.allow_tf32,
              torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
              torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction, torch.get_deterministic_debug_mode())
    yield
    _flags.FLAGS.update(ours)
    torch.set_float32_matmul_precision(theirs[0])
    (torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic,
     torch.backends.cudnn.allow_tf32) = theirs[1:5]
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = theirs[5]
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = theirs[6]
    torch.set_deterministic_debug_mode(theirs[7])


def same(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ours = outcome(fn, numgrad), [str(x.message) for x in w]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        theirs = outcome(fn, torch), [str(x.message) for x in w if "Triggered internally" not in str(x.message)]
    theirs = theirs[0], [m.split(" (Triggered internally")[0] for m in theirs[1]]
    assert ours == theirs


def test_accelerator():
    if numgrad.cuda.is_available():  # a machine with a GPU: numgrad's accelerator is it
        assert numgrad.accelerator.is_available() and numgrad.accelerator.current_accelerator().type == "cuda"
        assert numgrad.accelerator.device_count() >= 1 and numgrad.accelerator.current_device_index() == 0
        numgrad.accelerator.synchronize()
        return
    for fn in (lambda lib: lib.accelerator.is_available(), lambda lib: lib.accelerator.current_accelerator(),
               lambda lib: lib.accelerator.current_accelerator(check_available=True),
               lambda lib: lib.accelerator.device_count(), lambda lib: lib.accelerator.current_device_index(),
               lambda lib: lib.accelerator.synchronize(), lambda lib: lib.accelerator.set_device_index(0),
               lambda lib: lib.accelerator.memory_allocated(), lambda lib: lib.accelerator.empty_cache()):
        same(fn)


def test_the_mnist_example_device_line():
    for lib in (numgrad, torch):
        use_accel = lib.accelerator.is_available()
        dev = lib.accelerator.current_accelerator() if use_accel else lib.device("cpu")
        assert lib.ones(2).to(dev).sum().item() == 2.0


def test_defaults_match_torch():
    same(lambda lib: (lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32,
                      lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
                      lib.backends.cuda.matmul.allow_bf16_reduced_precision_reduction, lib.backends.cudnn.enabled,
                      lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic, lib.backends.cudnn.allow_tf32,
                      lib.backends.cudnn.is_available(), lib.backends.cudnn.version(), lib.backends.mps.is_available(),
                      lib.backends.mps.is_built(), lib.are_deterministic_algorithms_enabled(),
                      lib.is_deterministic_algorithms_warn_only_enabled(), lib.get_deterministic_debug_mode()))


def test_cpu_capability_is_one_of_torchs_names():
    assert numgrad.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    assert numgrad.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()


@pytest.mark.parametrize("steps", [
    [("precision", "medium")], [("precision", "high")], [("precision", "highest")], [("precision", "fast")],
    [("precision", 3)], [("tf32", True)], [("tf32", True), ("tf32", False)], [("tf32", True), ("precision", "medium")],
    [("tf32", 1)], [("tf32", "yes")],
])
def test_matmul_precision_and_tf32_are_one_setting(steps):
    def run(lib):
        for what, value in steps:
            if what == "precision":
                lib.set_float32_matmul_precision(value)
            else:
                lib.backends.cuda.matmul.allow_tf32 = value
        return lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32
    same(run)


@pytest.mark.parametrize("name, value", [("allow_fp16_reduced_precision_reduction", False),
                                         ("allow_bf16_reduced_precision_reduction", (False, True)),
                                         ("allow_fp16_reduced_precision_reduction", 1), ("foo", True)])
def test_matmul_flags(name, value):
    def run(lib):
        setattr(lib.backends.cuda.matmul, name, value)
        return getattr(lib.backends.cuda.matmul, name)
    same(run)
    same(lambda lib: lib.backends.cuda.matmul.bar)


@pytest.mark.parametrize("name, value", [("enabled", False), ("benchmark", True), ("deterministic", True),
                                         ("allow_tf32", False), ("benchmark", 1), ("deterministic", None),
                                         ("enabled", "no"), ("benchmark_limit", 4)])
def test_cudnn_flags(name, value):
    def run(lib):
        setattr(lib.backends.cudnn, name, value)
        return getattr(lib.backends.cudnn, name)
    same(run)


def test_cudnn_flags_context_restores():
    def run(lib):
        lib.backends.cudnn.benchmark = True
        with lib.backends.cudnn.flags(enabled=False, deterministic=True):
            inside = (lib.backends.cudnn.enabled, lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic)
        return inside, (lib.backends.cudnn.enabled, lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic)
    same(run)


@pytest.mark.parametrize("steps", [[(True, {})], [(True, {"warn_only": True})], [(True, {}), (False, {})],
                                   [(1, {})], [("debug", "warn")], [("debug", 2)], [("debug", "x")], [("debug", 5)],
                                   [("debug", "error"), ("debug", "default")]])
def test_deterministic_algorithms(steps):
    def run(lib):
        for mode, kw in steps:
            if mode == "debug":
                lib.set_deterministic_debug_mode(kw)
            else:
                lib.use_deterministic_algorithms(mode, **kw)
        return (lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
                lib.get_deterministic_debug_mode())
    same(run)
