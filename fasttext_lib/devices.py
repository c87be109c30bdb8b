"""Device specs (``ctx``) -> MXNet contexts, and the largest table MXNet allocates, for training and serving alike."""
from .errors import FastTextError, setting_named
from .lean_import import forget_an_interrupted_import

CTX_HELP = "use auto, cpu, cpu:N, gpu, gpu:N or gpu:0,1"


def check_ctx(spec):
    """The spec's kind and device ids, checked without MXNet (``TrainConfig`` validates with it).

    ``"auto"`` -> ``("auto", [])``; ``"gpu:0,1"`` -> ``("gpu", [0, 1])``; anything else is a
    one-line :class:`FastTextError` (``cpu:x``, ``gpu:abc``, ``cpu:-1``, ``gpu:``).
    """
    text = str(spec).strip().lower()
    if text in ("auto", "cpu", "gpu"):
        return text, ([0] if text != "auto" else [])
    kind, sep, ids = text.partition(":")
    if kind in ("cpu", "gpu") and sep:
        parts = [i.strip() for i in ids.split(",")]
        if parts and all(p.isdigit() for p in parts):  # isdigit: no sign, so no negative ids
            return kind, [int(p) for p in parts]
        raise FastTextError(f"bad {_ctx_named()} {spec!r}: device ids must be non-negative integers ({CTX_HELP})")
    raise FastTextError(f"unknown {_ctx_named()} {spec!r}: {CTX_HELP}")


def _ctx_named():
    """``ctx`` as the lines below name it: ``--ctx`` on the command line (errors.setting_named)."""
    return setting_named("ctx")


def parse_ctx(spec="auto"):
    """``auto`` | ``cpu`` | ``gpu`` | ``gpu:N`` | ``gpu:0,1`` | a list of those -> list of mx.Context.

    ``auto`` is every GPU when ``mx.context.num_gpus() > 0``, else the CPU.
    """
    forget_an_interrupted_import("mxnet")  # (Predictor.load and the notebooks' check cells start here)
    import mxnet as mx

    if isinstance(spec, (list, tuple)):
        if not spec:  # papermill -y "ctx: []": train() failed in an IndexError, after the data was read
            raise FastTextError(f"{_ctx_named()} names no device, got {spec!r}: {CTX_HELP}")
        return [c for s in spec for c in parse_ctx(s)]
    if isinstance(spec, mx.Context):
        # checked as 'gpu:0' is: [mx.cpu(), mx.gpu(0)] on a machine without a GPU was MXNet's raw "GPU is not
        # enabled" traceback once training started
        if spec.device_type == "gpu":
            _check_gpus_visible([spec.device_id], mx.context.num_gpus(), str(spec))
        return [spec]
    kind, ids = check_ctx(spec)
    num_gpus = mx.context.num_gpus()
    if kind == "auto":
        return [mx.gpu(i) for i in range(num_gpus)] or [mx.cpu()]
    if kind == "cpu":  # several CPU "devices" exercise the multi-device path without GPUs
        return [mx.cpu(i) for i in ids]
    _check_gpus_visible(ids, num_gpus, repr(spec), repr(str(spec).strip().lower()))
    return [mx.gpu(i) for i in ids]


def parse_one_ctx(spec="cpu"):
    """The one mx.Context ``spec`` names, for what runs on one device (a bundle loaded to predict or evaluate):
    ``auto`` is the first GPU, else the CPU; a list of devices (``gpu:0,1``, ``["cpu", "gpu"]``) is refused in one
    line naming one to pass (its first device was used, and the others silently not)."""
    ctxs = parse_ctx(spec)
    if len(ctxs) > 1 and not (isinstance(spec, str) and spec.strip().lower() == "auto"):
        first = ctxs[0]
        one = "cpu" if first.device_type == "cpu" and first.device_id == 0 else f"{first.device_type}:{first.device_id}"
        raise FastTextError(f"{setting_named('ctx', spec)} names {len(ctxs)} devices, and a bundle is loaded on one: "
                            f"pass one (cpu, gpu or gpu:N), such as {setting_named('ctx', one)}")
    return ctxs[0]


def _check_gpus_visible(ids, num_gpus, typed, normalized=None):
    """Refuse GPU ``ids`` that are not visible, in one line naming the ctx: ``typed`` as given (a spec quoted as
    typed, ``'GPU'``; an mx.Context as it prints, ``gpu(0)``), ``normalized`` as read (default: ``typed``)."""
    if num_gpus == 0:  # (-p ctx gpu on a CPU instance: what to pass instead, as typed)
        raise FastTextError(f"{_ctx_named()} {typed} asks for a GPU but none is visible (mx.context.num_gpus() == 0): "
                            f"use auto (every GPU, else the CPU) or cpu")
    if any(i >= num_gpus for i in ids):
        raise FastTextError(f"{_ctx_named()} {normalized or typed}: only {num_gpus} GPU(s) visible")


def describe_ctx(ctxs):
    """The contexts a run trained on, as its line says them (the CLI's, notebook 02's, a training job's): MXNet's
    names, ``cpu(0)``, ``gpu(0), gpu(1)``. A ``cpu:N`` context is no device of its own: every CPU context is the one
    CPU (MXNet keeps the id as a label; tests give ``cpu:0,1`` to run the multi-device path without GPUs), so where
    one besides ``cpu(0)`` is named, the line says so: ``cpu(1)`` alone read as a second device."""
    names = ", ".join(str(c) for c in ctxs)
    cpus = [c for c in ctxs if getattr(c, "device_type", None) == "cpu"]
    if len(cpus) > 1:
        return f"{names} ({len(cpus)} contexts on the one CPU: cpu:N is no other device)"
    if cpus and cpus[0].device_id != 0:
        return f"{names} (the same CPU as cpu(0): cpu:N is no other device)"
    return names


# MXNet 1.9's pip builds index a tensor with 32 bits (no USE_INT64_TENSOR_SIZE): a larger embedding
# table (e.g. --ngrams 2 --emsize 1100 with 2M buckets) failed at allocation with a traceback.
MAX_TABLE_VALUES = 2**31 - 1


def table_fits(num_rows, emsize):
    """Whether MXNet can allocate a ``num_rows`` x ``emsize`` table."""
    return int(num_rows) * int(emsize) <= MAX_TABLE_VALUES


def check_table_size(num_rows, emsize, where="the embedding table"):
    """Refuse a ``num_rows`` x ``emsize`` table larger than MXNet can allocate (one error line, whose advice names the
    settings as the caller's user sets them: errors.setting_named)."""
    if not table_fits(num_rows, emsize):
        raise FastTextError(f"{where}: {int(num_rows):,} rows x emsize {int(emsize)} = {int(num_rows) * int(emsize):,} "
                            f"values, more than the {MAX_TABLE_VALUES:,} MXNet can hold in one tensor; "
                            f"{lower_the_table()}")


def lower_the_table():
    """What shrinks the embedding table, as a line that refuses it (too large for MXNet, or for the memory) says it:
    ``lower --emsize or --buckets`` on the command line, ``lower emsize or buckets`` in Python
    (errors.setting_named)."""
    return f"lower {setting_named('emsize')} or {setting_named('buckets')}"


_MEMINFO = "/proc/meminfo"
# A container's memory limit, what is in use under it, and the part of that the kernel can drop (inactive page cache:
# the data files read, which docker and the kubelet leave out too): cgroup v2's files, then v1's (no limit: "max" or
# a huge number).
_CGROUP_MEMORY = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory.stat",
                   "inactive_file"),
                  ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                   "/sys/fs/cgroup/memory/memory.stat", "total_inactive_file"))


_STATUS = "/proc/self/status"

# What a run maps after its embedding table (a 2M-row bigram run of the built-in sample: 62 MB; 1.5 GB of ulimit -v
# left it 17 MB, and 40 MB aborted it): MXNet's engine and OpenMP thread stacks, created at the first steps, and
# arrays of one int64 or float64 per row (the init's and the step's row scales). Counted with a margin, so that a
# limit that cannot hold them is one error line before the table is filled, where MXNet's threads found no room
# and the process aborted. (A 5k-row table with 32 MB of margin: a segfault at 710 MB, two threads.)
AFTER_TABLE_BYTES = 64 << 20
AFTER_TABLE_BYTES_PER_ROW = 32


def address_space_left():
    """Bytes of address space this process may still map under its ``ulimit -v`` (RLIMIT_AS, which counts mappings,
    used or not, where memory counts pages in use); None without such a limit (or not Linux)."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        with open(_STATUS) as f:
            mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return max(0, limit - mapped)


def memory_room():
    """Bytes this process can still fill: the least of :func:`available_memory` (the OOM killer's) and
    :func:`address_space_left` (``ulimit -v``'s); None where neither can be read."""
    rooms = [room for room in (available_memory(), address_space_left()) if room is not None]
    return min(rooms) if rooms else None


def available_memory():
    """Bytes that can still be filled before the kernel's OOM killer acts: /proc/meminfo's MemAvailable and free
    swap, or less under a container's memory limit; None where that cannot be read (not Linux)."""
    try:
        with open(_MEMINFO) as f:
            info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f if line.split()[1:2] != []}
        room = info["MemAvailable"] + info.get("SwapFree", 0)
    except (OSError, KeyError, ValueError, IndexError):
        return None
    for limit_file, usage_file, stat_file, droppable in _CGROUP_MEMORY:
        try:
            with open(limit_file) as limit, open(usage_file) as usage, open(stat_file) as stat:
                cache = next((int(line.split()[1]) for line in stat if line.split()[:1] == [droppable]), 0)
                left = int(limit.read()) - (int(usage.read()) - cache)
        except (OSError, ValueError, IndexError):  # "max" (v2's no limit), or no such files
            continue
        return max(0, min(room, left))
    return room
