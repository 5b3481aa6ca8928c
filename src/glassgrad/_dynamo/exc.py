"""torch._dynamo.exc: the errors torch.compile raises before compiling (an unknown backend)."""

__all__ = ["TorchDynamoException", "InvalidBackend", "Unsupported", "UncapturedHigherOrderOpError"]


class TorchDynamoException(RuntimeError):
    pass


class InvalidBackend(TorchDynamoException):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.")


class Unsupported(TorchDynamoException):
    pass


class UncapturedHigherOrderOpError(TorchDynamoException):
    """torch.cond / torch.while_loop's checks of their branches and steps (torch traces them with dynamo)."""
