"""Several nodes, each started on its own as torchrun does it:

    node 0:  glassgrad run --nnodes 2 --node-rank 0 --master-addr A --master-port P --nproc-per-node N script.py
    node 1:  glassgrad run --nnodes 2 --node-rank 1 --master-addr A --master-port P --nproc-per-node N script.py

Each node's launcher starts its N ranks with mpiexec, so every node is an MPI job of its own.  When the script
calls init_process_group, the node jobs are joined into one communicator with MPI's dynamic-process calls:
node 0's first rank opens an MPI port and hands its name out over TCP at MASTER_ADDR:MASTER_PORT (the role of
torchrun's rendezvous store); the group accepts one node at a time (Accept, Merge), every node already joined
taking part in the next accept; finally the ranks are ordered by RANK = node_rank * N + local rank.

(On a cluster with a hostfile, ``mpiexec -n N glassgrad run script.py`` needs none of this: MPI places the
ranks itself.)
"""
import socket
import threading
import time


class RendezvousError(RuntimeError):
    """Raised as torch's DistNetworkError (a client cannot reach node 0) or DistStoreError (node 0 waits)."""

    def __init__(self, message, waiting_for_clients=False):
        super().__init__(message)
        self.waiting_for_clients = waiting_for_clients


def join_nodes(MPI, nnodes, node_rank, global_rank, addr, port, timeout, store=None):
    """One intracommunicator over every rank of `nnodes` MPI jobs, ranked by `global_rank`; node 0's first
    rank serves the MPI port name at addr:port (or through `store`, a torch.distributed store: the store=
    or file:// of init_process_group).  A job of one process each is the case of processes started apart
    (torch.multiprocessing.spawn, or by hand) that give init_process_group their rank and world size."""
    local = MPI.COMM_WORLD
    deadline = time.monotonic() + timeout
    first = local.Get_rank() == 0
    handed = None
    if node_rank == 0:
        comm, joined = local, 1
        port_name = MPI.Open_port() if first else ""
        if first:
            handed = _serve(port_name, addr, port, nnodes - 1, deadline) if store is None else _StoreHanded(
                store, port_name)
    else:
        if first:
            port_name = _fetch(addr, port, deadline, timeout) if store is None else _fetch_from_store(
                store, deadline, timeout)
        else:
            port_name = ""
        comm = local.Connect(port_name, root=0).Merge(high=True)
        joined = comm.bcast(None, root=0)       # how many nodes are in the group now
    while joined < nnodes:                      # the nodes already in the group accept the next one
        if handed is not None and not handed.acquire(timeout=max(deadline - time.monotonic(), 0)):
            raise RendezvousError(f"Timed out after {timeout:g} seconds waiting for clients. {joined}/{nnodes} "
                                  "clients joined.", waiting_for_clients=True)
        comm = comm.Accept(port_name if comm.Get_rank() == 0 else "", root=0).Merge(high=False)
        joined = comm.bcast(joined + 1, root=0)
    if node_rank == 0 and first:
        MPI.Close_port(port_name)
    return comm.Split(0, global_rank)


def _serve(port_name, addr, port, clients, deadline):
    """Answer `clients` TCP connections at addr:port with the MPI port name, in a thread (the accepts run
    meanwhile); the semaphore returned is released once per answer."""
    server = socket.create_server((addr, port), reuse_port=False)
    server.settimeout(max(deadline - time.monotonic(), 0.1))
    handed = threading.Semaphore(0)

    def answer():
        try:
            for _ in range(clients):
                conn, _ = server.accept()
                with conn:
                    conn.sendall(port_name.encode() + b"\n")
                handed.release()
        except OSError:
            pass
        finally:
            server.close()
    threading.Thread(target=answer, daemon=True).start()
    return handed


_PORT_KEY, _FETCHED_KEY = "glassgrad/rendezvous/mpi_port", "glassgrad/rendezvous/fetched"


class _StoreHanded:
    """The port name set in the store; ``acquire`` waits until one more node has read it (the store's
    count), as _serve's semaphore does for the TCP hand-out."""

    def __init__(self, store, port_name):
        self.store, self.taken = store, 0
        store.set(_PORT_KEY, port_name)

    def acquire(self, timeout):
        deadline = time.monotonic() + timeout
        while self.store.add(_FETCHED_KEY, 0) <= self.taken:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        self.taken += 1
        return True


def _fetch_from_store(store, deadline, timeout):
    while not store.check([_PORT_KEY]):
        if time.monotonic() > deadline:
            raise RendezvousError(f"Timed out after {timeout:g} seconds waiting for rank 0 to set the MPI port in "
                                  "the store", waiting_for_clients=True)
        time.sleep(0.01)
    port_name = store.get(_PORT_KEY).decode()
    store.add(_FETCHED_KEY, 1)
    return port_name


def _fetch(addr, port, deadline, timeout):
    """The MPI port name from node 0, retrying until node 0 is up or the timeout passes."""
    while True:
        try:
            with socket.create_connection((addr, port), timeout=1.0) as conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                if data.endswith(b"\n"):
                    return data[:-1].decode()
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RendezvousError(f"The client socket has timed out after {timeout:g}s "
                                  f"while trying to connect to ({addr}, {port}): no rank 0 there (MASTER_ADDR, "
                                  "MASTER_PORT or init_method)")
        time.sleep(0.1)
