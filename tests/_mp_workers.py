"""What the processes started by tests/test_multiprocessing.py run: module-level functions, importable by name as
"spawn" needs.  Each works on torch or glassgrad, whichever made its arguments (``_lib``), and imports neither
itself: the oracle's processes and glassgrad's run the same code, and a child loads only the library it uses."""
import os
import signal
import sys
import time


def _lib(obj):
    return sys.modules[type(obj).__module__.split(".")[0]]


def meta(t):
    """What a received tensor looks like: class, dtype, shape, strides, offset, autograd flags, sharing."""
    return (type(t).__name__, str(t.dtype), tuple(t.shape), t.stride(), t.storage_offset(), t.requires_grad,
            t.is_leaf, t.grad is None, t.is_shared())


def mutate(tensors):
    """The in-place change a child makes: +1, or logical not for bool (under no_grad: leaves may require grad);
    expanded tensors (a zero stride) are left alone, as torch refuses to write to them."""
    lib = _lib(tensors[0])
    with lib.no_grad():
        for t in tensors:
            if 0 in t.stride():
                continue
            if t.dtype == lib.bool:
                t.logical_not_()
            else:
                t.add_(1)


def echo_and_mutate(inbox, outbox):
    """Receive tensors, report their metadata, change them in place, send the first back and a new tensor of its
    own; stay alive until the parent has received them (the receiver fetches memory from the sender)."""
    tensors = inbox.get()
    report = [meta(t) for t in tensors]
    mutate(tensors)
    lib = _lib(tensors[0])
    outbox.put((report, tensors[0], lib.full((2,), 7.0), os.getpid()))
    inbox.get()


def fill_slot(i, out, delay):
    """spawn's fn: process i writes i + 1 into its slot of a shared tensor."""
    time.sleep(delay)
    out[i] = i + 1


def raise_in_one(i):
    """Process 1 raises; process 0 would sleep for a minute unless it is stopped."""
    if i == 1:
        raise ValueError(f"boom in process {i}")
    time.sleep(60)


def exit_with(i, code):
    sys.exit(code)


def kill_self(i):
    os.kill(os.getpid(), signal.SIGKILL)


def hogwild(i, model, x, y, out):
    """Process 0 trains the shared model for three SGD steps; every process marks its slot of ``out``."""
    lib = _lib(out)
    if i == 0:
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            lib.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    out[i] = i + 1
