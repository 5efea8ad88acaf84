"""numgrad.distributed and DistributedDataParallel, in real MPI jobs of two processes (mpiexec, launched in
a session of their own and killed whole on a timeout): the collectives against NumPy, DDP against
one-process training, and a crashing rank that ends the job instead of hanging it."""
import os
import pathlib
import signal
import subprocess
import sys

import pytest

import numgrad
import numgrad.distributed as dist
from numgrad.distributed import run as launcher

pytest.importorskip("mpi4py", reason="the dist extra (mpi4py, mpich) is part of the test extra")
HERE = pathlib.Path(__file__).parent
TIMEOUT = 120


def mpirun(script, n=2):
    """(exit code, output) of `script` on n ranks; the job's process group is killed if it outlives TIMEOUT."""
    cmd = launcher.command(n, str(HERE / script), [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parents[2]), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{script} hung for {TIMEOUT} s:\n{out}")
    return proc.returncode, out


def test_collectives_match_numpy():
    code, out = mpirun("collectives_job.py")
    assert code == 0, out
    assert "rank 0: collectives OK" in out and "rank 1: collectives OK" in out


def test_ddp_on_half_batches_equals_one_process_on_the_full_batch():
    code, out = mpirun("ddp_job.py")
    assert code == 0, out
    for name in ("MLP SGD", "MLP no_sync x2", "convnet Adam", "unused head"):
        assert f"{name}: 2 ranks on half batches == 1 process on the full batch" in out
    assert "rank 1: DDP OK" in out


def test_a_crashing_rank_ends_the_job_with_its_error():
    code, out = mpirun("crash_job.py")
    assert code != 0
    assert "ValueError: rank 1 failed in step 1" in out


def test_single_process_group_without_a_launcher():
    """A script started alone is rank 0 of 1 (MPI's singleton), so DDP code runs unchanged."""
    script = ("import numgrad, numgrad.distributed as dist\n"
              "dist.init_process_group('nccl'); t = numgrad.ones(3); dist.all_reduce(t, op=dist.ReduceOp.AVG)\n"
              "print(dist.get_rank(), dist.get_world_size(), dist.get_backend(), t.tolist())\n"
              "try:\n    dist.init_process_group()\nexcept ValueError as e:\n    print(e)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PMI_RANK", "PMI_SIZE", "RANK", "WORLD_SIZE")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["0 1 nccl [1.0, 1.0, 1.0]",
                                       "trying to initialize the default process group twice!"]


def test_errors_before_initialisation_and_for_bad_arguments():
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        numgrad.nn.parallel.DistributedDataParallel(numgrad.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="Invalid backend: 'carrier-pigeon'"):
        dist.init_process_group("carrier-pigeon")


def test_launcher_runs_each_rank_under_mpi4py_with_one_thread():
    cmd = launcher.command(4, "train.py", ["--lr", "0.1"])
    assert cmd[1:3] == ["-n", "4"] and cmd[-5:] == ["-m", "mpi4py", "train.py", "--lr", "0.1"]
    assert cmd[cmd.index("NUMBA_NUM_THREADS") + 1] == os.environ.get("NUMBA_NUM_THREADS", "1")


def test_post_accumulate_grad_hooks_and_final_callbacks_match_torch():
    torch = pytest.importorskip("torch")
    from numgrad.autograd import engine
    for lib, queue in ((torch, torch.autograd.Variable._execution_engine.queue_callback), (numgrad, engine.queue_callback)):
        seen = []
        x = lib.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: seen.append(("hook", t.grad.tolist())) or
                                             queue(lambda: seen.append("end")))
        (x * 3).sum().backward()
        assert seen == [("hook", [3.0, 3.0]), "end"], lib
        with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass."):
            queue(lambda: None)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf"):
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        y = lib.ones(1, requires_grad=True)
        y.register_post_accumulate_grad_hook(lambda t: 5)
        with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
            y.sum().backward()
