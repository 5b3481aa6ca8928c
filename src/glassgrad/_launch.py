"""``glassgrad run``: run an unmodified PyTorch script on glassgrad, on one process or several (torchrun's role).

    glassgrad run [--nproc-per-node N] SCRIPT.py [script args...]
    glassgrad run --nnodes M --node-rank R --master-addr A --master-port P [--nproc-per-node N] SCRIPT.py ...
                                                             (on each of M nodes, as torchrun)
    mpiexec -n N glassgrad run SCRIPT.py [args...]          (a cluster: MPI's launcher places the ranks)

``import torch`` in the script is served by glassgrad (the import hook of _torch_alias.py).  Each process gets
torchrun's environment -- RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT -- so
``dist.init_process_group("gloo")`` (or ``init_method="env://"``) works unchanged.  With ``--nproc-per-node N``
(N > 1) the command starts ``mpiexec -n N`` on itself; under mpiexec the ranks come from MPI's
environment.  With ``--nnodes M`` each node's ranks are an MPI job of their own, joined into one world by
init_process_group through node 0 at MASTER_ADDR:MASTER_PORT (distributed/_rendezvous.py).  One process
needs no MPI.
"""
import os
import runpy
import subprocess
import sys

_FLAGS = {"--nproc-per-node", "--nproc_per_node", "--nnodes", "--node-rank", "--node_rank", "--master-addr",
          "--master_addr", "--master-port", "--master_port", "--rdzv-endpoint", "--rdzv_endpoint", "--rdzv-backend",
          "--rdzv_backend", "--rdzv-id", "--rdzv_id", "--max-restarts", "--max_restarts"}


def parse(argv):
    """(options dict, script, script args): torchrun's flags before the script, everything after it is the
    script's."""
    opts = {"nproc": 1, "nnodes": 1, "node_rank": 0, "master_addr": "127.0.0.1", "master_port": "29500"}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        flag, _, value = argv[i].partition("=")
        if flag == "--standalone":
            i += 1
            continue
        if flag not in _FLAGS:
            raise SystemExit(f"glassgrad run: unknown option {flag!r}")
        if not value:
            i += 1
            if i >= len(argv):
                raise SystemExit(f"glassgrad run: {flag} needs a value")
            value = argv[i]
        key = flag.lstrip("-").replace("-", "_")
        if key == "rdzv_endpoint":              # host:port of the rendezvous: node 0's MASTER_ADDR/PORT
            host, _, port = value.rpartition(":")
            opts.update(master_addr=host or value, master_port=port if host else opts["master_port"])
        elif key == "max_restarts" and value != "0":
            raise SystemExit("glassgrad run: --max-restarts: a failed job is not restarted (give 0)")
        else:
            opts["nproc" if key == "nproc_per_node" else key] = value
        i += 1
    if i >= len(argv):
        raise SystemExit("glassgrad run: no script given (glassgrad run [--nproc-per-node N] SCRIPT.py [args...])")
    for key in ("nproc", "nnodes", "node_rank"):
        try:
            opts[key] = int(opts[key])
        except ValueError:
            raise SystemExit(f"glassgrad run: --{key.replace('_', '-')} must be a number, not {opts[key]!r} "
                             "(elastic MIN:MAX node counts are not supported)") from None
    if not 0 <= opts["node_rank"] < opts["nnodes"]:
        raise SystemExit(f"glassgrad run: --node-rank {opts['node_rank']} is outside 0..{opts['nnodes'] - 1}")
    return opts, argv[i], argv[i + 1:]


def _mpi_rank():
    """(rank, size, local rank, local size) from the environment mpiexec gives its processes, or None."""
    env = os.environ
    for rank, size in (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")):
        if rank in env and size in env:
            local = env.get("MPI_LOCALRANKID", env.get("OMPI_COMM_WORLD_LOCAL_RANK", env[rank]))
            local_size = env.get("MPI_LOCALNRANKS", env.get("OMPI_COMM_WORLD_LOCAL_SIZE", env[size]))
            return int(env[rank]), int(env[size]), int(local), int(local_size)
    return None


def run(argv):
    opts, script, args = parse(argv)
    if not os.path.isfile(script):
        print(f"glassgrad run: no such script: {script}", file=sys.stderr)
        return 2
    ranks = _mpi_rank()
    if ranks is None and (opts["nproc"] > 1 or opts["nnodes"] > 1):
        return _spawn(opts, script, args)
    rank, size, local, local_size = ranks or (0, 1, 0, 1)
    if opts["nnodes"] > 1:                      # this node's MPI job is one of several (distributed/_rendezvous.py)
        rank, size = opts["node_rank"] * size + rank, opts["nnodes"] * size
        os.environ["GLASSGRAD_NNODES"] = str(opts["nnodes"])
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(local), LOCAL_WORLD_SIZE=str(local_size),
                      GROUP_RANK=str(opts["node_rank"]), MASTER_ADDR=os.environ.get("MASTER_ADDR", opts["master_addr"]),
                      MASTER_PORT=os.environ.get("MASTER_PORT", str(opts["master_port"])))
    return _run_script(script, args)


def _spawn(opts, script, args):
    """Start N ranks of this command through the mpich wheel's mpiexec; its exit code is the job's."""
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(mpiexec):
        print("glassgrad run: more than one process needs MPI: pip install glassgrad[dist]", file=sys.stderr)
        return 2
    cmd = [mpiexec, "-n", str(opts["nproc"]), sys.executable, "-m", "glassgrad", "run",
           "--nnodes", str(opts["nnodes"]), "--node-rank", str(opts["node_rank"]),
           "--master-addr", opts["master_addr"], "--master-port", str(opts["master_port"]), script] + list(args)
    return subprocess.call(cmd)


def _run_script(script, args):
    """Run the script as __main__.  A rank that fails ends the whole job (MPI_Abort) after printing its
    error, so the other ranks are not left waiting in a collective for it."""
    from ._torch_alias import install
    install()
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            _abort_job(code)
        return code
    except BaseException:
        import traceback
        traceback.print_exc()
        _abort_job(1)
        raise
    return 0


def _abort_job(code):
    """End every rank of an MPI job (torchrun ends the job when one worker fails)."""
    if "mpi4py.MPI" in sys.modules:
        from .distributed.distributed_c10d import abort_job
        abort_job(code)
