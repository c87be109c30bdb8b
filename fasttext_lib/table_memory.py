"""The embedding table's memory: checked, allocated, adopted by Gluon and read in place, never copied.

The table is the one large array of a run (800 MB for a bigram model, up to the 2**31 values MXNet holds in
one tensor); the block that uses it (model.py) only sees an ``nn.Embedding``. Holding it once,
and failing in one line where it cannot be held, takes the code here:

* :func:`allocate_table`: the memory (and, under ``ulimit -v``, the address space) checked first, so that a table
  too large is one error line rather than MXNet's traceback, the OOM killer or an abort, counting what the run
  holds beside it in host memory (:func:`host_need`: adam's moments there, a kvstore's copy of the table);
* :func:`check_room_to_load`: the same for a bundle's table being loaded (read from its file, or rebuilt from a
  compact bundle's rows), whose error says what to load it on instead; :func:`check_room_for_stored_rows` for a
  compact bundle's stored rows;
* :func:`advise_huge_pages`: 2 MB pages for the table, asked before its first write;
* :func:`adopt_data`: a Gluon parameter takes the array as it is, without the copy ``initialize`` makes (and
  :func:`adopt_table`, training's table, whose copy to a GPU that cannot hold it, or adam's moments (and a
  ``device`` kvstore's copy of the table) beside it where :func:`states_place` says they live, is one error line);
  :func:`copied_to`: a table's copy to a GPU, its allocation's failure raised where it is copied;
* :func:`cpu_view`: numpy reads and writes the table in place (its initial values, CPU scoring, compact bundles);
  :func:`fill_from_file`: a file's values read straight into that memory (a resumed run's table and adam's moments);
* :func:`all_finite`, :func:`check_finite`: a loaded bundle's inf or NaN found through that view, in blocks,
  with no temporary the size of the table.

Not in devices.py, which holds the machine's side of the same checks (the memory available, the address space
left, the largest tensor MXNet allocates): that module imports neither MXNet nor ctypes, and config.py imports it
before MXNet loads; this one works on MXNet arrays and Gluon parameters.
"""
import contextlib
import ctypes
import sys
import typing

import mxnet as mx
import numpy as np
from mxnet import nd

from .devices import AFTER_TABLE_BYTES, AFTER_TABLE_BYTES_PER_ROW, address_space_left, available_memory, lower_the_table
from .errors import FastTextError, is_out_of_memory, reason_of, setting_named


def allocate_table(num_rows, emsize, state_tables=0, loading=None, place=None, ctxs=None):
    """An uninitialized ``num_rows`` x ``emsize`` float32 table on the CPU; one error line naming its size when
    there is not the memory for it (MXNet's 'Failed to allocate CPU Memory' was a traceback). Also when the kernel
    would hand it out but not back it: every row is written next (fill_table), and a table larger than the memory
    available was killed by the OOM killer (an exit with no line) once filled. What the run holds beside it in this
    process's memory is counted too (:func:`host_need`, from ``state_tables``, ``place`` and ``ctxs``: by default a
    CPU run whose optimizer keeps ``state_tables`` more tables beside it): adam's two moments, allocated at its first
    step (without them in the count, an adam run passed this check and was killed at its first step; none where
    they live on a GPU or the servers, :func:`states_place`: counted here, they refused runs that fit), a kvstore's
    copy of the table, made at kv.init (uncounted, a run with kvstore ``local`` or ``device`` passed this check and
    was killed there or got MXNet's traceback), and another CPU context's copy. Under a ``ulimit -v`` the tables
    and what the run maps after them (:data:`~fasttext_lib.devices.AFTER_TABLE_BYTES`) must fit in the address
    space left: a limit a little above the tables crashed MXNet at its first steps (a segfault, or 'terminate
    called' when a thread found no stack), exit 134 with no line.

    ``loading``: ``(what, advice)`` for a bundle's table being loaded (compact.materialize): checked as
    :func:`check_room_to_load` checks it (the table alone), its error naming ``what`` and saying ``advice``."""
    if loading is not None:
        check_room_to_load(num_rows, emsize, *loading)
        try:
            return nd.empty((num_rows, emsize), ctx=mx.cpu(), dtype="float32")
        except mx.base.MXNetError as exc:
            if not is_out_of_memory(exc):
                raise
            raise out_of_memory_loading(num_rows, emsize, *loading, cause=reason_of(exc)) from None
    size = num_rows * emsize * 4
    need = host_need(num_rows, emsize, state_tables, place, ctxs)
    _check_address_space(num_rows, emsize, need.total)
    room = available_memory()
    if room is not None and need.total > room:
        beside = ", ".join(f"{count} {'more of that size ' if i == 0 else ''}for {what}"
                           for i, (count, what) in enumerate(need.beside))
        beside = f", and {beside} ({need.total / 2**30:.1f} GiB in all)" if beside else ""
        raise FastTextError(f"out of memory for the embedding table: {num_rows:,} rows x emsize {emsize} = "
                            f"{size / 2**30:.1f} GiB of float32{beside}, more than the {room / 2**30:.1f} GiB of "
                            f"memory available here; {lower_the_table()}{need.advice}")
    try:
        return nd.empty((num_rows, emsize), ctx=mx.cpu(), dtype="float32")
    except mx.base.MXNetError as exc:
        if not is_out_of_memory(exc):
            raise
        raise FastTextError(f"out of memory for the embedding table: {num_rows:,} rows x emsize {emsize} = "
                            f"{size / 2**30:.1f} GiB of float32; {lower_the_table()}") from None


def _check_address_space(num_rows, emsize, tables_bytes):
    left = address_space_left()
    if left is None:
        return
    need = tables_bytes + AFTER_TABLE_BYTES + AFTER_TABLE_BYTES_PER_ROW * num_rows
    if need > left:
        raise FastTextError(f"out of memory for the embedding table: {num_rows:,} rows x emsize {emsize} need about "
                            f"{need >> 20:,} MB more address space, and this process may map {left >> 20:,} MB more "
                            f"(ulimit -v): raise that limit, or {lower_the_table()}")


def check_room_to_load(num_rows, emsize, what, advice):
    """Refuse (one error line naming ``what``, the bundle, and saying ``advice``) to load a ``num_rows`` x ``emsize``
    float32 embedding table this process cannot hold: more than the memory available (every page is written as
    the file is read or the rows rebuilt, and the OOM killer ended the process with no line: an endpoint worker
    that never came up), or than the address space left under ``ulimit -v`` (MXNet's 'Failed to allocate CPU
    Memory', which the loader took for a bundle that does not match its config.json).

    The table alone is counted, not training's margin for what runs after it (:func:`allocate_table`): a bundle
    loads and scores with a few MB to spare beside its table (a 79 MB table under ``ulimit -v``: 7 MB), and a load
    that works is not refused. What the little left over cannot hold is :func:`out_of_memory_loading`'s line."""
    size = int(num_rows) * int(emsize) * 4
    _refuse_beyond_room(size, lambda room: out_of_memory_loading(num_rows, emsize, what, advice, room=room))


def check_room_for_stored_rows(count, emsize, dtype, size, what, advice):
    """:func:`check_room_to_load` for a compact bundle's ``count`` stored rows of ``dtype``, ``size`` bytes once
    read (compact.read_rows): the rows a CPU scores from (hundreds of MB for a large corpus), read before any table."""
    _refuse_beyond_room(size, lambda room: out_of_memory_for_stored_rows(count, emsize, dtype, size, what, advice,
                                                                         room=room))


class LoadingTogether(typing.NamedTuple):
    """Processes that load the same bundle at once, each a copy of its own (an endpoint's model server workers at
    start-up: sm_serve.model_fn): ``count`` of them, this one among them, after ``loaded`` that hold theirs already;
    ``why``: why so many, and ``variable``: the setting that makes them fewer (in the model's environment)."""
    count: int = 1
    loaded: int = 0
    why: str = ""
    variable: str = ""


_TOGETHER = [LoadingTogether()]


@contextlib.contextmanager
def loading_together(together):
    """Within it, the memory a bundle's load needs is checked for ``together`` (:class:`LoadingTogether`): workers
    that start at once each see the same memory available, and a bundle that fits once passed the check in each of
    them, and the OOM killer ended them."""
    _TOGETHER.append(together)
    try:
        yield
    finally:
        _TOGETHER.pop()


def _refuse_beyond_room(size, error):
    """Raise ``error(room)`` (``room``: what this process has, said) when ``size`` bytes are more than the address
    space left under ``ulimit -v``, or than the memory available, for each of the processes that load it at once
    (:func:`loading_together`)."""
    left = address_space_left()
    if left is not None and size > left:
        raise error(f"this process may map {left >> 20:,} MB more (ulimit -v)")
    room = available_memory()
    if room is not None and size > room:
        raise error(f"this machine has {room >> 20:,} MB of memory available")
    together = _TOGETHER[-1]
    if room is not None and size * together.count > room:
        loaded = f"; {together.loaded} more hold it already" if together.loaded else ""
        fit = together.loaded + room // size
        raise error(f"this machine has {room >> 20:,} MB of memory available for the {together.count} workers that "
                    f"load it at once ({together.why}{loaded}), {-(-size * together.count >> 20):,} MB in all "
                    f"(fewer workers: {together.variable}={fit} in the model's environment)")


def out_of_memory_loading(num_rows, emsize, what, advice, room=None, cause=None):
    """The :class:`FastTextError` of a bundle's table that cannot be held (``room``: what this process has, said;
    ``cause``: the failed allocation's own message, where one failed)."""
    size = int(num_rows) * int(emsize) * 4
    return FastTextError(f"out of memory to load {what}: its embedding table, {int(num_rows):,} rows x emsize "
                         f"{int(emsize)}, needs {-(-size >> 20):,} MB of memory{_said(room, cause)}; {advice}")


def out_of_memory_for_stored_rows(count, emsize, dtype, size, what, advice, room=None, cause=None):
    """:func:`out_of_memory_loading` for a compact bundle's ``count`` stored rows, ``size`` bytes once read (int8 and
    int4 codes are read as float32 values)."""
    held = f"{dtype}, read as float32" if dtype in ("int8", "int4") else dtype
    return FastTextError(f"out of memory to load {what}: its stored embedding rows, {int(count):,} rows x emsize "
                         f"{int(emsize)} ({held}), need {-(-int(size) >> 20):,} MB of memory{_said(room, cause)}; "
                         f"{advice}")


def _said(room, cause):
    return f", and {room}" if room else f" ({cause})" if cause else ""


HUGE_PAGE = 2 << 20
MADV_HUGEPAGE = 14  # linux/mman.h


def advise_huge_pages(view):
    """Ask Linux to back a large array that nothing has written yet with 2 MB pages (transparent
    huge pages, when the system's setting is ``madvise`` or ``always``). No effect elsewhere.

    A training step reads and updates a few thousand rows scattered over the table (800 MB with
    bigrams). With 4 KB pages nearly every row is also a TLB miss and a page-table walk: the native
    bag operators spent about half their time on that (a 256-document batch of short texts: 1.1 ms
    per ``fasttext_bag_mean`` with 4 KB pages, 0.5 ms with 2 MB pages; docs/RESULTS.md 4). numpy
    asks for huge pages on its own large arrays; MXNet's allocator does not, hence this call on the
    table it allocates. The advice only shapes how pages are first faulted in, so it has to come
    before the first write. The values, and so the results, are the same either way.

    Faulting huge pages in can cost more than small ones where the host backs a virtual machine's
    memory lazily (this project's 2-core VM: 0.2-2 s instead of a steady 0.35 s for 800 MB), so a
    short run may lose more at the start than it saves (train.HUGE_PAGES_MIN_READS).
    """
    if not sys.platform.startswith("linux") or view.nbytes < 2 * HUGE_PAGE:
        return False
    start = view.ctypes.data
    first = -(-start // HUGE_PAGE) * HUGE_PAGE  # whole huge pages inside the array only
    last = (start + view.nbytes) // HUGE_PAGE * HUGE_PAGE
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return False
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return madvise(first, last - first, MADV_HUGEPAGE) == 0  # EINVAL where THP is compiled out: fine


def adopt_data(param, data, ctxs, copy=None):
    """Initialize Gluon ``param`` with ``data`` (an NDArray), kept as is on its own context; ``copy(data, ctx)``
    makes its copy on another (default :func:`copied_to`: waited for, so a device's failed allocation is raised here).

    ``Parameter.initialize`` and ``set_data`` copy: with an 800 MB table that copy is the run's peak
    memory. Gluon 1.9's ``_init_impl`` (pinned mxnet==1.9.1) calls ``data.copyto(ctx)`` once per
    context, so a wrapper whose ``copyto`` hands back ``data`` itself on its own context adopts it.
    """
    param._deferred_init = ()
    param._init_impl(_Adopted(data, copy or copied_to), list(ctxs))


class _Adopted:
    """:func:`adopt_data`'s ``data``, for Gluon's ``_init_impl``. A class of this module, not one made per call: a
    class holds itself in a reference cycle, and one made in the function kept ``data`` (its methods' closure) until
    Python's cyclic collector next ran, so a GPU run's host table outlived its copies to the GPUs, beside the
    kvstore's copy of it made next (kv.init)."""
    __slots__ = ("data", "copy")

    def __init__(self, data, copy):
        self.data, self.copy = data, copy

    def copyto(self, ctx):
        return self.data if ctx == self.data.context else self.copy(self.data, ctx)


class StatesPlace(typing.NamedTuple):
    """Where MXNet 1.9.1 keeps what a run's optimizer adds beside the embedding table, each table-sized: adam's two
    moments, made by the updater on its weight's context at the first step (``Updater.__call__`` and
    ``Adam.create_state``, python/mxnet/optimizer/optimizer.py:2096-2097, 1602-1607), and a kvstore's own copy of
    the table, the weight its updater updates (docs/GPU.md, "Where adam's moments live"; paths in apache/mxnet at
    tag 1.9.1, commit 3f8f3be9, src/kvstore/ for the .h files)."""
    on_host: bool = True  # the moments are in this process's memory: counted by allocate_table
    gpus: tuple = ()  # GPUs that may hold them beside their copy of the table: their room tried on each
    store_copy: bool = False  # the kvstore's copy of the table is made with them there
    # the kvstore's copy of the table in this process's (pinned) memory: "run", for the whole run; "setup", from
    # kv.init until the first push moves it to a GPU; "": none
    host_store: str = ""
    row_sparse: bool = False  # a kvstore's: its copy and the moments beside it are row_sparse (every row's index too)
    # where kv.init's row_sparse cast of the table is made (a kvstore's: the first device, optim.Updater), beside
    # that device's table: None without a kvstore
    conversion: object = None


def states_place(kvstore, ctxs):
    """The :class:`StatesPlace` of a run on ``ctxs`` whose optimizer a ``kvstore`` applies (train.kvstore_type's:
    None for MXNet's own updater on one device).

    * None: beside the table on its device (the host for a CPU, else that GPU);
    * ``dist_*``: on the parameter servers (kv.set_optimizer sends them the optimizer, kvstore/kvstore.py:587-598);
      nothing of it in this process. A GPU worker's kv.init copies the value it sends into pinned host memory, kept
      until its first push (kvstore_dist.h:192-203, 355-373; a CPU's is sent from where it is, 364);
    * ``local`` (``CommCPU``): the store keeps its value in pinned host memory (kvstore_local.h:232, comm.h:43) and
      merges row_sparse gradients into a buffer there, from one device too (comm.h:115, 124-136, 170-200, 416-427),
      so the value never moves to a GPU (kvstore_local.h:249-254) and the moments are made beside it, on the host;
    * ``device`` (``CommDevice``): on GPUs, the first push moves the stored value to the context of the merged
      gradient (kvstore_local.h:249-254), freeing its host copy (pinned memory is not pooled, src/storage/storage.cc:78-93):
      the GPU itself with one device (comm.h:510-511), else the GPU the table's merge buffer went to, chosen by the
      order of an ``unordered_map`` among equally loaded GPUs (comm.h:675-710), which Python cannot know: each GPU
      is tried. On CPUs, as ``local``.

      A list of CPUs and GPUs: the merge buffer goes to one of the devices CommDevice keys by their number alone
      (comm.h:680-683: of ``cpu(0)`` and ``gpu(0)``, the one later in the list), and the value moves only to a GPU's
      (kvstore_local.h:249-254 compares the device type): on the host where the candidates are CPUs, as on CPUs;
      where they are a CPU and a GPU, either: counted on the host and tried on the GPUs (:func:`merge_candidates`)."""
    gpus = tuple(ctx for ctx in ctxs if ctx.device_type == "gpu")
    if kvstore is None:
        return StatesPlace(on_host=not gpus, gpus=gpus)
    cast = {"row_sparse": True, "conversion": ctxs[0]}
    if kvstore.startswith("dist"):
        return StatesPlace(on_host=False, host_store="setup" if ctxs[0].device_type == "gpu" else "", **cast)
    candidates = merge_candidates(ctxs)
    gpus = tuple(ctx for ctx in candidates if ctx.device_type == "gpu")
    if not gpus or kvstore == "local":
        return StatesPlace(host_store="run", **cast)
    if len(gpus) < len(candidates):  # a CPU's or a GPU's: the host holds them for the run, or the GPU does
        return StatesPlace(on_host=True, gpus=gpus, store_copy=True, host_store="run", **cast)
    return StatesPlace(on_host=False, gpus=gpus, store_copy=True, host_store="setup", **cast)


def merge_candidates(ctxs):
    """The devices of ``ctxs`` a ``device`` kvstore's merge buffer may go to (MXNet 1.9.1
    CommDevice::InitMergeBuffer, src/kvstore/comm.h:680-683, ``ctx_info[d.dev_id]``): one for each device number, the
    last in the list with it (``[cpu(0), gpu(0)]``: gpu(0) only); which of them, Python cannot know."""
    return tuple({ctx.device_id: ctx for ctx in ctxs}.values())


class HostNeed(typing.NamedTuple):
    """The most host memory a training run holds at once for its embedding table and the tables beside it
    (:func:`host_need`): ``total`` bytes; ``beside``, the tables of the table's size in it besides the table,
    ``(count, what)``, for the error line; ``advice``, what else lowers it (after devices.lower_the_table's "lower
    emsize or buckets"), naming settings as the caller's user sets them (errors.setting_named: ``--optimizer sgd``)."""
    total: int
    beside: tuple = ()
    advice: str = ""


def host_need(num_rows, emsize, state_tables=0, place=None, ctxs=None):
    """:class:`HostNeed` of a training table of ``num_rows`` x ``emsize`` on ``ctxs`` (default: the CPU), with
    ``state_tables`` optimizer tables (adam's moments) kept where ``place`` (:func:`states_place`) says.

    The table is built in host memory (cpu(0)'s) and copied to each other device (adopt_data), both held while it is
    copied; after it, one table for each CPU context (another CPU context holds a copy; a run without cpu(0), on GPUs
    or on ``cpu(1)``, lets cpu(0)'s go) and the rest after it. Beside it, at kv.init, a
    kvstore's copy of it (``place.host_store``: kvstore_local.h:232, kvstore_dist.h:355-373) and, on a CPU first
    device, the row_sparse cast of the table kv.init is given (``place.conversion``, optim.Updater; a dist_*
    worker's is kept until its first push, kvstore_dist.h:364); from the first step adam's moments where they live
    on the host. A row_sparse table holds each row's int64 index as well. The most of these held at once counts."""
    ctxs = ctxs or [mx.cpu()]
    place = place or StatesPlace()
    table = int(num_rows) * int(emsize) * 4
    sparse = table + int(num_rows) * 8
    cpus = list(dict.fromkeys(ctx for ctx in ctxs if ctx.device_type == "cpu"))
    copies = [(1, f"{ctx}'s copy") for ctx in cpus if ctx != mx.cpu()]  # of the table built on cpu(0)
    built = table * (1 + len(copies))
    # once copied: cpu(0)'s table where cpu(0) trains, else the first copy is the run's table, the others beside it
    held = copies if mx.cpu() in cpus else copies[1:]
    kept = table * len(cpus)
    moments = state_tables if place.on_host else 0
    # (on GPUs the store's copy takes the host table's place: not one more)
    store = [(1, "the kvstore's copy of it")] if place.host_store and cpus else []
    cast = [(1, "kv.init's row_sparse cast of it")] if place.conversion is not None and \
        place.conversion.device_type == "cpu" else []
    setup = kept + sparse * (1 if place.host_store else 0) + sparse * len(cast)
    run = kept + (sparse if place.host_store == "run" else 0) + moments * (sparse if place.row_sparse else table)
    phases = [(built, copies), (setup, store + cast + held),
              (run, [(moments, "adam's moments")] * bool(moments) + store * (place.host_store == "run") + held)]
    total, beside = max(phases, key=lambda phase: phase[0])
    advice = f", or {_use_sgd()}" if any(what == "adam's moments" for _, what in beside) else ""
    if (store or cast) and len(ctxs) == 1 and any(what.startswith(("the kvstore", "kv.init")) for _, what in beside):
        advice += f", or {setting_named('kvstore', 'auto')} (one device: no kvstore, no copy)"
    return HostNeed(total, tuple(beside), advice)


def adopt_table(param, table, ctxs, state_tables=0, place=None):
    """:func:`adopt_data` for training's embedding table (built on the CPU by :func:`allocate_table`), its copy to
    each other device (a GPU) waited for: one error line where a device cannot hold it. Unwaited, MXNet's
    'cudaMalloc retry failed: out of memory' came at the first step, a traceback after the run's setup.
    ``state_tables``: as :func:`allocate_table`'s. ``place``: where they live (:class:`StatesPlace`; None: not
    tried): on the GPUs it names, their room (and the kvstore's copy's) is tried where the table is copied, as all
    are allocated at the first step, after the run's setup (:func:`_make_room_for_states`)."""
    place = place or StatesPlace()

    def copy(data, ctx):
        tried_here = ctx in place.gpus
        moments = state_tables if tried_here else 0
        cast = ctx == place.conversion and ctx.device_type == "gpu"
        try:
            on_device = copied_to(data, ctx)
        except mx.base.MXNetError as exc:
            if not is_out_of_memory(exc):
                raise
            num_rows, emsize = data.shape
            size = num_rows * emsize * 4
            states = f", and {moments} more of that size for adam's moments" if moments else ""
            raise FastTextError(f"out of memory for the embedding table on {ctx}: {num_rows:,} rows x emsize {emsize} "
                                f"= {size / 2**30:.1f} GiB of float32{states} ({reason_of(exc)}); {lower_the_table()}"
                                f"{f', or {_use_sgd()}' if moments else ''}, or train on a device with more "
                                f"memory") from None
        if (tried_here and (moments or place.store_copy)) or cast:
            _make_room_for_states(ctx, data.shape, moments, tried_here and place.store_copy, cast, place.row_sparse)
        return on_device

    adopt_data(param, table, ctxs, copy)


def room_tried(shape, state_tables, store_copy=False, cast=False, row_sparse=False):
    """The arrays (``(shape, dtype)``) :func:`_make_room_for_states` holds at once on a device for ``state_tables``
    optimizer tables of the embedding table's ``shape``, a kvstore's copy of it (``store_copy``), or kv.init's cast
    (``cast``: made and freed before the others, so the larger count is tried). Each row_sparse one (``row_sparse``:
    a kvstore's tables, StatesPlace.row_sparse; the cast always is) holds every row, and beside its values each
    row's index, an int64 (MXNet 1.9.1 python/mxnet/ndarray/sparse.py ``_STORAGE_AUX_TYPES``; aux data of
    ``num_rows`` elements): 8 bytes a row that a GPU without them fails to hold at the first push."""
    tables = state_tables + store_copy
    sparse = row_sparse or not tables  # (the cast alone: row_sparse)
    one = [(tuple(shape), "float32")] + ([((shape[0],), "int64")] if sparse else [])
    return one * max(tables, int(cast))


def _make_room_for_states(ctx, shape, state_tables, store_copy=False, cast=False, row_sparse=False):
    """Refuse (one error line naming them) ``state_tables`` optimizer tables of ``shape``, and with ``store_copy`` a
    kvstore's copy of the table (row_sparse, every row: about one table), that the device ``ctx`` cannot hold beside
    the embedding table just copied there. With ``cast``, ``ctx`` is the first device, where optim.Updater makes
    the table's row_sparse cast for kv.init (about one table, freed before the first step: it counts where nothing
    else is tried). ``row_sparse``: the tables are (a kvstore's), each row's int64 index beside its values
    (:func:`room_tried`: the arrays). They are made as adam makes its moments (zeros of the table's shape,
    waited for: a failed allocation is raised at the wait), all held at once (one dropped before the next is made
    would hand its memory on to it), and dropped here: MXNet's GPU pool keeps that memory, and the same sizes made
    at kv.init and the first step take it back, so nothing more is held."""
    num_rows, emsize = shape
    size = num_rows * emsize * 4
    held = []
    try:
        for array_shape, dtype in room_tried(shape, state_tables, store_copy, cast, row_sparse):
            held.append(nd.zeros(array_shape, ctx=ctx, dtype=dtype))
            held[-1].wait_to_read()
    except mx.base.MXNetError as exc:
        if not is_out_of_memory(exc):
            raise
        if not state_tables and not store_copy:
            raise FastTextError(f"out of memory for kv.init's row_sparse cast of the table on {ctx}: {num_rows:,} rows "
                                f"x emsize {emsize} = {size / 2**30:.1f} GiB of float32 beside the embedding table's "
                                f"{size / 2**30:.1f} GiB ({reason_of(exc)}); {lower_the_table()}, or train on a "
                                f"device with more memory first in {setting_named('ctx')}") from None
        copy = f"the kvstore's copy of the table ({size / 2**30:.1f} GiB)"
        local = (f"{setting_named('kvstore', 'local')} (which keeps {'them' if state_tables else 'it'} in this "
                 f"machine's memory), or ")
        if not state_tables:
            raise FastTextError(f"out of memory for the kvstore's copy of the table on {ctx}: {num_rows:,} rows x "
                                f"emsize {emsize} = {size / 2**30:.1f} GiB of float32 beside the embedding table's "
                                f"{size / 2**30:.1f} GiB ({reason_of(exc)}); {lower_the_table()}, or use {local}"
                                f"train on a device with more memory") from None
        raise FastTextError(f"out of memory for adam's moments on {ctx}: {state_tables} tables of {num_rows:,} rows x "
                            f"emsize {emsize} = {state_tables * size / 2**30:.1f} GiB of float32"
                            f"{' and ' + copy if store_copy else ''} beside the embedding table's "
                            f"{size / 2**30:.1f} GiB ({reason_of(exc)}); {lower_the_table()}, or {_use_sgd()}, or "
                            f"{local if store_copy else ''}train on a device with more memory") from None


def _use_sgd():
    """Advice to use the optimizer that keeps no moments, naming it as the caller's user sets it: ``use --optimizer
    sgd`` on the command line, ``use optimizer='sgd'`` in Python (errors.setting_named)."""
    return f"use {setting_named('optimizer', 'sgd')}"


def copied_to(table, ctx):
    """``table`` (an NDArray) copied to the device ``ctx``, the copy waited for. MXNet allocates the device's memory
    when its engine runs the copy, and a failed allocation ('cudaMalloc retry failed: out of memory') is raised at
    the next wait for the array: unwaited, a compact bundle's table loaded 'fine' onto a GPU too small for it and
    failed at its first prediction, a traceback; waited for here, the load's own out-of-memory line says it."""
    copy = table.copyto(ctx)
    copy.wait_to_read()
    return copy


def cpu_view(array):
    """A numpy view (no copy) of a dense float32 CPU NDArray; ``None`` for anything else.

    The view shares the NDArray's memory: it sees later in-place updates and is valid while the
    NDArray lives (keep a reference to it). Pending writes are waited for first; later ones are
    not (call ``array.wait_to_read()`` before reading again).
    """
    from mxnet.base import _LIB, check_call

    if array.context.device_type != "cpu" or array.stype != "default" or array.dtype != np.float32:
        return None
    array.wait_to_read()
    if not array.size:
        return np.zeros(array.shape, dtype=np.float32)
    pointer = ctypes.c_void_p()
    check_call(_LIB.MXNDArrayGetData(array.handle, ctypes.byref(pointer)))
    buffer = (ctypes.c_float * array.size).from_address(pointer.value)
    return np.frombuffer(buffer, dtype=np.float32).reshape(array.shape)


def fill_from_file(view, f, block_bytes, cut_short):
    """Read the next bytes of the binary file ``f`` into ``view`` (a C-contiguous numpy array, :func:`cpu_view`'s of
    an NDArray), ``block_bytes`` at a time, with no copy of them beside (a checkpoint's table and adam's moments:
    params_file, state_file). A read may return fewer bytes than asked (a zip member's does); ``cut_short``, the
    exception each caller's message is made from, is raised where ``f`` ends before ``view`` is full."""
    flat = memoryview(view.reshape(-1)).cast("B")
    for start in range(0, len(flat), block_bytes):
        part = flat[start:start + block_bytes]
        while len(part):
            got = f.readinto(part)
            if not got:
                raise cut_short
            part = part[got:]


class NonFinite(ValueError):
    """Loaded parameters hold inf or NaN (``str``: which ones)."""


def all_finite(array):
    """Whether a parameter (NDArray, or numpy) holds no inf or NaN.

    A dense float32 CPU array is scanned through its numpy view in blocks of 4M values (no temporary the
    size of the table; a 2M x 100 table takes ~0.1 s, about 6% of loading its bundle from a warm page
    cache); anything else (a GPU array) asks MXNet's ``all_finite`` on its own device."""
    view = array if isinstance(array, np.ndarray) else cpu_view(array)
    if view is None:
        return bool(nd.all_finite(array).asscalar())
    flat = view.reshape(-1)
    return all(np.isfinite(flat[a:a + (1 << 22)]).all() for a in range(0, flat.size, 1 << 22))


def check_finite(model, skip=()):
    """Raise :class:`NonFinite` naming the first parameter of ``model`` (all but ``skip``) with inf or NaN."""
    for name, param in model._collect_params_with_prefix().items():
        if name not in skip and not all_finite(param.data(param.list_ctx()[0])):
            raise NonFinite(f"parameter {name!r}")
