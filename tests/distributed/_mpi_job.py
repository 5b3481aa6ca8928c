"""Run a worker script of this folder on several processes under the mpich wheel's mpiexec."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")


def mpi_job(script, *args, n=2, timeout=120):
    """(exit status, stdout + stderr, seconds) of ``mpiexec -n N python SCRIPT ARGS`` (SCRIPT in this folder).
    A worker that raises ends the job with its traceback (init_process_group's uncaught-error hook)."""
    assert os.path.exists(MPIEXEC), "mpiexec missing: make test installs mpich (glassgrad[dist])"
    start = time.monotonic()
    r = subprocess.run([MPIEXEC, "-n", str(n), sys.executable, os.path.join(HERE, script), *args],
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr, time.monotonic() - start
