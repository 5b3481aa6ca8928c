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
import os
import socket
import threading
import time


class RendezvousError(RuntimeError):
    pass


def join_nodes(MPI, nnodes, global_rank, timeout):
    """One intracommunicator over every rank of every node, ranked by `global_rank`."""
    local = MPI.COMM_WORLD
    addr, port = os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT", "29500"))
    node_rank = int(os.environ.get("GROUP_RANK", "0"))
    deadline = time.monotonic() + timeout
    first = local.Get_rank() == 0
    if node_rank == 0:
        comm, joined = local, 1
        port_name = MPI.Open_port() if first else ""
        if first:
            _serve(port_name, addr, port, nnodes - 1, deadline)
    else:
        port_name = _fetch(addr, port, deadline) if first else ""
        comm = local.Connect(port_name, root=0).Merge(high=True)
        joined = comm.bcast(None, root=0)       # how many nodes are in the group now
    while joined < nnodes:                      # the nodes already in the group accept the next one
        comm = comm.Accept(port_name if comm.Get_rank() == 0 else "", root=0).Merge(high=False)
        joined = comm.bcast(joined + 1, root=0)
    if node_rank == 0 and first:
        MPI.Close_port(port_name)
    return comm.Split(0, global_rank)


def _serve(port_name, addr, port, clients, deadline):
    """Answer `clients` TCP connections at addr:port with the MPI port name (in a thread: the accepts run
    meanwhile)."""
    server = socket.create_server((addr, port), reuse_port=False)
    server.settimeout(max(deadline - time.monotonic(), 0.1))

    def answer():
        try:
            for _ in range(clients):
                conn, _ = server.accept()
                with conn:
                    conn.sendall(port_name.encode() + b"\n")
        except OSError:
            pass
        finally:
            server.close()
    threading.Thread(target=answer, daemon=True).start()


def _fetch(addr, port, deadline):
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
            raise RendezvousError(f"Timed out waiting for node 0 at {addr}:{port} (MASTER_ADDR:MASTER_PORT)")
        time.sleep(0.1)
