"""torch.device."""


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if type.__class__ is device:
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            type, index = "cuda", type
        if ":" in type:
            if index is not None:
                raise ValueError("type (string) must not include an index because index was passed explicitly: " + type)
            type, _, idx = type.partition(":")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
                f"lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if other.__class__ is not device:
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))


cpu = device("cpu")


def as_device(d):
    if d is None:
        return cpu
    if d.__class__ is device:
        return d
    return device(d)
