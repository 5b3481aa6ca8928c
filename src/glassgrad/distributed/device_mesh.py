"""torch.distributed.device_mesh: DeviceMesh (an n-d array of global ranks, a process group along each of its
dimensions) and init_device_mesh.

Making a mesh is collective: every rank of the job makes it (the groups along each dimension are made with
one MPI split per dimension).  A dimension that spans the whole world uses the default group.  Slicing by
dimension names (``mesh["tp"]``, ``mesh["dp", "tp"]``) gives the sub-mesh through this rank, whose groups
are the parent's.
"""
import numpy as np

from .._tensor import Tensor, _make
from .distributed_c10d import _WORLD, ProcessGroup, _group, get_rank, init_process_group, is_initialized


def _check_device(device_type):
    if ":" in str(device_type):
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to pass in 'device.type'.")


def _check_names(names, ndim):
    if names is None:
        return None
    names = tuple(names)
    if len(set(names)) != len(names):
        raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names "
                           f"{names}")
    if len(names) != ndim:
        raise RuntimeError(f"mesh_dim_names must have the same length as the mesh's dimensions: {names} for "
                           f"{ndim} dimensions")
    return names


class DeviceMesh:
    """DeviceMesh(device_type, mesh, *, mesh_dim_names=None, backend_override=None): `mesh` (a tensor or
    nested list of global ranks) lays the ranks out in n dimensions; ``get_group(dim)`` is the process group
    of the ranks that share this rank's coordinates on the other dimensions."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, backend_override=None, _init_backend=True,
                 _groups=None):
        _check_device(device_type)
        ranks = np.asarray(mesh._data if isinstance(mesh, Tensor) else mesh, dtype=np.int64)
        flat = ranks.reshape(-1).tolist()
        if _groups is None and _init_backend:
            if not is_initialized():
                init_process_group()
            if len(flat) > _group(None).size():
                raise RuntimeError(f"Mesh should not be bigger than default world size {_group(None).size()}, but "
                                   f"found {len(flat)} ranks!")
        if len(set(flat)) != len(flat):
            raise ValueError(f"ranks list must not contain duplicate entries, got {flat}")
        self.device_type = device_type
        self._ranks = ranks
        self.mesh_dim_names = _check_names(mesh_dim_names, ranks.ndim)
        self._groups = _groups if _groups is not None else (_make_groups(ranks) if _init_backend else None)

    @property
    def mesh(self):
        return _make(self._ranks.astype(np.int32))

    @property
    def ndim(self):
        return self._ranks.ndim

    @property
    def shape(self):
        return tuple(self._ranks.shape)

    def size(self, mesh_dim=None):
        return int(self._ranks.size) if mesh_dim is None else self.shape[mesh_dim]

    def get_rank(self):
        return get_rank()

    def get_coordinate(self):
        where = np.argwhere(self._ranks == get_rank())
        return tuple(int(i) for i in where[0]) if len(where) else None

    def _dim(self, mesh_dim, what):
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(*what)
            return 0
        if isinstance(mesh_dim, str):
            names = self.mesh_dim_names or ()
            if mesh_dim not in names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.",
                               f"Available mesh dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return names.index(mesh_dim)
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError("list index out of range")
        return mesh_dim % self.ndim

    def get_group(self, mesh_dim=None):
        dim = self._dim(mesh_dim, (f"Found the DeviceMesh have {self.ndim} dimensions",
                                   "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                                   "If you want to get the list of all the ProcessGroups in the DeviceMesh,"
                                   "please use `get_all_groups()` instead."))
        return self._groups[dim]

    def get_all_groups(self):
        return list(self._groups)

    def get_local_rank(self, mesh_dim=None):
        dim = self._dim(mesh_dim, (f"Found the DeviceMesh have {self.ndim} dimensions",
                                   "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1."))
        coord = self.get_coordinate()
        return None if coord is None else coord[dim]

    def __getitem__(self, mesh_dim_names):
        if not self.mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self.mesh_dim_names:
            return self
        if any(n not in self.mesh_dim_names for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are "
                           f"{list(self.mesh_dim_names)}.")
        dims = [self.mesh_dim_names.index(n) for n in names]
        wide = [d for d in dims if self.shape[d] > 1]       # torch orders by stride: size-1 dims have none
        if wide != sorted(wide):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should be in ascending "
                           "order.")
        coord = self.get_coordinate() or (0,) * self.ndim
        index = tuple(slice(None) if d in dims else coord[d] for d in range(self.ndim))
        kept = sorted(dims)
        sub = np.transpose(self._ranks[index], [kept.index(d) for d in dims])
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names,
                          _groups=[self._groups[d] for d in dims] if self._groups else None)

    @classmethod
    def from_group(cls, group, device_type, mesh=None, *, mesh_dim_names=None):
        """A mesh over existing groups: one group (a 1-d mesh of its ranks), or a group per dimension of
        `mesh`."""
        if isinstance(group, ProcessGroup):
            ranks = mesh if mesh is not None else list(_group(group).ranks)
            return cls(device_type, ranks, mesh_dim_names=mesh_dim_names, _groups=[group])
        groups = list(group)
        if mesh is None:
            raise ValueError("Expects a `mesh` tensor when passing a list of groups, got None")
        return cls(device_type, mesh, mesh_dim_names=mesh_dim_names, _groups=groups)

    def _layout(self):
        strides = np.cumprod((self.shape + (1,))[:0:-1])[::-1] if self.ndim else ()
        return tuple(() if n == 1 else int(s) for n, s in zip(self.shape, strides))

    def __repr__(self):
        if self.mesh_dim_names:
            dims = "(" + ", ".join(f"{k}={n}" for k, n in zip(self.mesh_dim_names, self.shape)) + ")"
        else:
            dims = repr(self.shape)
        return f"DeviceMesh({dims}, '{self.device_type}', stride={self._layout()!r})"

    def _key(self):
        return (tuple(self._ranks.reshape(-1).tolist()), self.shape, self.device_type, self.mesh_dim_names)

    def __eq__(self, other):
        return self is other or (isinstance(other, DeviceMesh) and self._key() == other._key())

    def __hash__(self):
        return hash(self._key())


def _make_groups(ranks):
    """The group along each dimension through this rank (None where this rank is not in the mesh): one
    split of the world per dimension, colored by the row of the mesh each rank lies on."""
    world = _group(None)
    me = world.rank()
    groups = []
    for dim in range(ranks.ndim):
        rows = np.moveaxis(ranks, dim, -1).reshape(-1, ranks.shape[dim])
        color, members = -1, None
        for i, row in enumerate(rows.tolist()):
            if me in row:
                color, members = i, row
        if sorted(rows[0].tolist()) == list(range(world.size())) and len(rows) == 1:
            groups.append(world)
            continue
        comm = world.comm.split_color(color if color >= 0 else len(rows))
        _WORLD["count"] += len(rows)
        if members is None:
            comm.free()
            groups.append(None)
            continue
        groups.append(ProcessGroup(comm, members, world.backend, world.timeout))
    return groups


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A DeviceMesh of the given shape over global ranks 0, 1, ... in row-major order (the default process
    group is made first when there is none)."""
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names "
                               f"{tuple(mesh_dim_names)}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! Found len(mesh_dim_names): "
                               f"{len(mesh_dim_names)} and len(mesh_shape):{len(mesh_shape)}.")
    _check_device(device_type)
    if not is_initialized():
        init_process_group()
    n, world = int(np.prod(mesh_shape)), _group(None).size()
    if n > world:
        raise RuntimeError(f"Mesh should not be bigger than default world size {world}, but found {n} ranks!")
    return DeviceMesh(device_type, np.arange(n).reshape(mesh_shape), mesh_dim_names=mesh_dim_names)


__all__ = ["DeviceMesh", "init_device_mesh"]
