"""`python -m numgrad.distributed.run -n N script.py [args]`: torchrun's role, as a thin wrapper over
mpiexec. Each rank runs `python -m mpi4py script.py` (an exception on one rank aborts the job instead of
leaving the others waiting) with one compute thread, so that N ranks share the cores instead of
oversubscribing them."""
import argparse
import os
import shutil
import sys

# one thread for every pool a rank may start: numgrad's kernels (Numba's count), OpenMP, OpenBLAS, MKL
ONE_THREAD = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def mpiexec():
    """The mpiexec beside this Python (the mpich wheel installs it there), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("mpiexec not found: pip install 'numgrad[dist]' (mpi4py and the mpich wheel)")
    return found


def command(n, script, args, hosts=None, hostfile=None):
    cmd = [mpiexec(), "-n", str(n)]
    if hosts:
        cmd += ["-hosts", hosts]
    if hostfile:
        cmd += ["-f", hostfile]
    for name in ONE_THREAD:  # -genv: the same value on every host
        cmd += ["-genv", name, os.environ.get(name, "1")]
    return cmd + [sys.executable, "-m", "mpi4py", script, *args]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m numgrad.distributed.run",
                                     description="Runs a training script on N MPI ranks.")
    parser.add_argument("-n", "--nproc", "--nproc-per-node", "--nproc_per_node", type=int, default=1,
                        dest="n", help="number of processes")
    parser.add_argument("--hosts", help="comma-separated host names (mpiexec -hosts)")
    parser.add_argument("--hostfile", help="a file of host names, one a line (mpiexec -f)")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)
    cmd = command(opts.n, opts.script, opts.args, opts.hosts, opts.hostfile)
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
