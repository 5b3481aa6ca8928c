"""torch.distributed on MPI (mpi4py + the mpich wheel: ``pip install glassgrad[dist]``).

Process groups and ReduceOp/Work are in distributed_c10d.py, the collectives in collectives.py, the MPI
layer in _comm.py.  Run a script on N processes with ``mpiexec -n N python script.py``; a single process
needs no MPI.
"""
from .distributed_c10d import *  # noqa: F401,F403
from .collectives import *  # noqa: F401,F403
from . import distributed_c10d  # noqa: F401
from ._backend import *  # noqa: F401,F403
from .store import *  # noqa: F401,F403
from ._tcpstore import TCPStore  # noqa: F401
from .collectives_more import *  # noqa: F401,F403
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from . import constants  # noqa: F401
from .rendezvous import register_rendezvous_handler, rendezvous  # noqa: F401
