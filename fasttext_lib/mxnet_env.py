"""Starting MXNet in the processes the command line runs: an environment it cannot run in is one error line.

MXNet 1.9.1 parses some environment variables as numbers or yes/no (``dmlc::GetEnv``) when its library loads,
where a value it cannot parse is thrown past every handler: ``OMP_NUM_THREADS=abc`` aborted the process
("terminate called after throwing an instance of 'dmlc::ParamError'", exit 134) before any line of ours. Others it
parses when its engine starts or at the first operator, where the error was a traceback in ``train`` and, in
``predict`` / ``evaluate``, blamed on the bundle ("model parameters ... do not match config.json"). So
:func:`start_mxnet` checks those variables first (:data:`PARSED`), then imports MXNet (lean_import) and starts its
engine with one small operator, so that what is still wrong (``MXNET_ENGINE_TYPE=garbage``, a thread count of 0,
``ulimit -v`` too low for its libraries) is one :class:`FastTextError` before the command begins.
"""
import os
import re
import sys

from .errors import FastTextError, reason_of
from .process_limits import (check_threads, env_threads as _env_threads, joins_a_cluster, missing_cluster_variables,
                             openmp_threads, usable_cpus as _usable_cpus)

_INT = (r"\s*[+-]?\d+\s*", "a whole number")  # what C++'s >> reads (no 2.0, no 0x10), within the type's range
_BOOL = (r"(?i:true|false|1|0)", "true, false, 1 or 0")
# strtod: spaces before the number, none after it ('Some trailing characters could not be parsed')
_DOUBLE = (r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", "a number")
_RANGE = {"int": 2**31, "long": 2**63}

# The variables MXNet 1.9.1 failed on with the value "abc" (each name libmxnet.so holds was tried) in training and
# prediction; which of them abort and which raise differs, so all are checked. An empty value is MXNet's default.
PARSED = {
    **{name: "int" for name in (
        "OMP_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS", "MXNET_CPU_PRIORITY_NTHREADS", "MXNET_CPU_PARALLEL_RAND_COPY",
        "MXNET_CPU_PARALLEL_SIZE", "MXNET_CPU_TEMP_COPY", "MXNET_GPU_WORKER_NTHREADS", "MXNET_GPU_COPY_NTHREADS",
        "MXNET_GPU_PARALLEL_RAND_COPY", "MXNET_GPU_TEMP_COPY", "MXNET_OMP_MAX_THREADS", "MXNET_MP_WORKER_NTHREADS",
        "MXNET_MP_OPENCV_NUM_THREADS", "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD",
        "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", "MXNET_EXEC_INPLACE_GRAD_SUM_CAP", "MXNET_MKLDNN_CACHE_NUM",
        "MXNET_PROFILER_AUTOSTART", "MXNET_PROFILER_MODE", "MXNET_DISABLE_MKLDNN_CONV_OPT", "MXNET_DISABLE_MKLDNN_FC_OPT",
        "MXNET_DISABLE_MKLDNN_FUSE_CONV_BN", "MXNET_DISABLE_MKLDNN_FUSE_CONV_RELU", "MXNET_DISABLE_MKLDNN_FUSE_CONV_SUM",
        "MXNET_DISABLE_MKLDNN_TRANSFORMER_OPT")},
    **{name: "bool" for name in (
        "MXNET_EXEC_BULK_EXEC_TRAIN", "MXNET_ENGINE_INFO", "MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING",
        "MXNET_MEM_PLAN_VERBOSE_LOGGING", "MXNET_KVSTORE_LOGTREE", "MXNET_MKLDNN_ENABLED", "MXNET_MKLDNN_DEBUG",
        "MXNET_MKLDNN_FORCE_FC_AB_FORMAT", "MXNET_OUTPUT_TUNING_DATA", "MXNET_VERBOSE_TUNING_INFO",
        "MXNET_DISABLE_MKLDNN_FUSE_FC_ELTWISE", "MXNET_DISABLE_MKLDNN_QEM_FLOAT_OUTPUT", "MXNET_DISABLE_MKLDNN_QEM_FUSE_ALL",
        "MXNET_DISABLE_MKLDNN_QFC_FLOAT_OUTPUT", "MXNET_DISABLE_MKLDNN_QFC_FUSE_ALL",
        "MXNET_DISABLE_MKLDNN_QTRANSFORMER_FLOAT_OUTPUT", "MXNET_DISABLE_MKLDNN_QTRANSFORMER_FUSE_ALL")},
    "MXNET_USE_NUM_CORES_OPERATOR_TUNING": "long",
    "MXNET_TUNING_WEIGHT_SCALE": "double",
}


_STARTED = [True]  # False once start_mxnet found that MXNet cannot start (its exit hook is dropped then)
# start_mxnet's and check_room_to_join's errors in this process: MXNet cannot start (or join) here
_REFUSED = []  # (cluster.tell_the_others: from a child)
# What a process MXNet could not start in gives the child that tells its cluster why (cluster.tell_the_others): MXNet's
# defaults for every variable it parses or its engine reads, and one thread per pool (the fewest threads, and the least
# address space: MIN_ADDRESS_SPACE's one-thread figure).
ONE_THREAD_EACH = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MXNET_CPU_WORKER_NTHREADS": "1",
                   "MXNET_CPU_PRIORITY_NTHREADS": "1"}


def check_environment(environ=None):
    """One :class:`FastTextError` for the first variable of :data:`PARSED` whose value MXNet cannot parse."""
    environ = os.environ if environ is None else environ
    for name, kind in PARSED.items():
        value = environ.get(name, "")
        if value and not _parses(value, kind):
            what = {"bool": _BOOL, "double": _DOUBLE}.get(kind, _INT)[1]
            raise FastTextError(f"environment variable {name}={value!r} is not {what}, which MXNet needs there (it "
                                f"would abort); correct it or unset it")


def _parses(value, kind):
    pattern = {"bool": _BOOL, "double": _DOUBLE}.get(kind, _INT)[0]
    if not re.fullmatch(pattern, value, re.ASCII):
        return False
    if kind == "double":  # strtod's ERANGE, which MXNet refuses ('Out of range value'): overflow, and underflow too
        number, mantissa = abs(float(value)), re.split("[eE]", value)[0]
        if number == 0:
            return not re.search("[1-9]", mantissa)  # a zero written, not one that underflowed (1e-400)
        return sys.float_info.min <= number <= sys.float_info.max
    return kind not in _RANGE or -_RANGE[kind] <= int(value) < _RANGE[kind]


def check_cluster_role(environ=None):
    """One :class:`FastTextError` where ``DMLC_ROLE`` has MXNet's import start this process as a parameter server or
    scheduler without the cluster's variables (process_limits.DIST_ENVIRONMENT): ps-lite takes any role but
    ``worker`` (``""`` left in a shell, ``Worker``) for one, and then stopped the import with "cannot load MXNet
    (Check notnull: ...DMLC_NUM_WORKER)", which named neither the variable nor the fix. Unset, or ``worker``: nothing
    to say (a worker's cluster is checked with its kvstore: cluster.check_kvstore_environment); a server's or
    scheduler's with its cluster set runs as MXNet's tools/launch.py starts it."""
    environ = os.environ if environ is None else environ
    role = environ.get("DMLC_ROLE")
    if role is None or role == "worker":
        return
    missing = missing_cluster_variables(environ)
    if role in ("server", "scheduler") and not missing:
        return
    started_as = (f"the cluster's {role}" if role in ("server", "scheduler") else
                  "a cluster's parameter server (MXNet takes any role but 'worker' for a server's)")
    raise FastTextError(f"environment variable DMLC_ROLE={role!r} starts this process as {started_as}, which needs "
                        f"{', '.join(missing)} set too; unset DMLC_ROLE to run on this host, or set DMLC_ROLE=worker "
                        f"in a cluster's worker")


def start_mxnet(command="train"):
    """Check the environment (and the address space ``command`` needs), import MXNet lean and start its engine (see
    the module docstring)."""
    try:
        _start_mxnet(command)
    except FastTextError:
        _REFUSED.append(True)
        raise


def cannot_start():
    """Whether MXNet cannot start in this process: :func:`start_mxnet` (or :func:`check_room_to_join`) refused it, or
    a value it aborts on is set."""
    try:
        check_environment()
    except FastTextError:
        return True
    return bool(_REFUSED)


def environment_it_starts_in():
    """This process's environment, but for the settings :func:`cannot_start` may have failed on
    (:data:`ONE_THREAD_EACH`), and with this package importable (a SageMaker job's entry point puts its source dir on
    ``sys.path`` alone)."""
    environ = {name: value for name, value in os.environ.items()
               if name not in PARSED and name != "MXNET_ENGINE_TYPE"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, (root, environ.get("PYTHONPATH"))))
    return dict(environ, **ONE_THREAD_EACH)


def _start_mxnet(command):
    from .lean_import import import_mxnet_lean

    check_environment()
    check_cluster_role()
    check_threads(command)  # (a thread MXNet or OpenMP cannot start aborts the process)
    check_address_space(command)
    try:
        import_mxnet_lean()
    except Exception as exc:  # ctypes could not load libmxnet / libopenblas (OSError), or its engine failed at import
        if not isinstance(exc, (OSError, MemoryError)) and type(exc).__name__ != "MXNetError":
            raise
        _drop_exit_hook()
        raise FastTextError(f"cannot load MXNet ({reason_of(exc)}){_hint()}") from None
    import mxnet as mx

    try:
        mx.nd.zeros((1,)).wait_to_read()
    except mx.base.MXNetError as exc:
        _drop_exit_hook()
        raise FastTextError(f"MXNet cannot start ({reason_of(exc).replace('MXNetError: ', '')}){_hint()}") from None


# Under ``ulimit -v`` MXNet runs out of address space at places no handler reaches: a segfault while libmxnet is
# mapped, or an abort when a thread cannot start or glibc cannot load libgcc_s to unwind a C++ exception (exit 139 or
# 134, no line); and numpy's OpenBLAS, given no room for its 32 MB buffer, retries for ever, deaf to Ctrl-C and
# SIGTERM (evaluate hung so). So a limit below what a command needs to start and run on a small input is refused
# first; above it, running out is an allocation that fails, which is said in one line (errors.out_of_memory_line).
# Measured with MXNet 1.9.1 and numpy 1.23 on the built-in sample (one malloc arena, below), in 10 MB steps: the
# smallest limit each command ran under with one thread / two (OMP_NUM_THREADS), and the largest at which it crashed
# or hung: train 520 / 700 (crashed at 510 / 680), evaluate 520 / 690 (hung at 510 / 680), export-vectors 490 / 660
# (crashed at 440 / 640), predict 480 / 650 (crashed at 440 / 610); in between, an error line. Refused below: those,
# with ~20 MB to spare (train's 700 kept: it ran at 696). One thread (OpenMP's and OpenBLAS's) needs ~160 MB less.
# With numpy's BLAS buffers mapped at the start (_map_blas_buffers: no more hangs), re-measured the same way: the
# largest crash is train 470 / 640, evaluate 500 / 670, export-vectors 470 / 670, predict 470 / 640, and each runs
# from 580 / 740 (train: allocate_table's address-space margin refuses below), 530 / 690, 520 / 700, 510 / 680.
# Re-measured once more after the native featurizer stopped reserving 8 MB blocks for a small request and stopped
# aborting when a thread could not start (predict crashed at 670, above its floor of 660 then): every command
# crashes up to 470 / 640 (evaluate once at 490 with one thread: a SystemError traceback importing gluonnlp) and
# runs from 500 / 670 (train 580 / 740); the CI machine, of the same kind, needed 10-20 MB more (predict ran out
# of memory at 690 there). Refused below: ~40 MB over the largest crash, so that a machine needing a little more
# gets an error line, not a crash.
MIN_ADDRESS_SPACE = {"train": (540 << 20, 700 << 20), "evaluate": (530 << 20, 680 << 20),
                     "export-vectors": (520 << 20, 680 << 20), "predict": (520 << 20, 680 << 20)}  # (1 thread, 2)
# A thread's stack, for each thread past the two measured: training's OpenMP threads (measured: 716 MB at 4, 740 at
# 8), and for the others OpenBLAS's, as many as the CPUs at most (they run no OpenMP operator: predict ran at 650
# MB with OMP_NUM_THREADS=8 on 2 CPUs).
THREAD_ADDRESS_SPACE = 8 << 20
# What a cluster's worker needs beyond train's figure, to join it (mx.kv.create: ps-lite's and ZeroMQ's threads and
# buffers; process_limits.joins_a_cluster). Measured as above, two workers on the built-in sample: the join aborted
# (ZeroMQ's "Resource temporarily unavailable", exit 134) or raised that as an MXNetError traceback up to 580 MB with
# one thread, 745 with two, after start_mxnet had passed, and the other workers waited FASTTEXT_CLUSTER_TIMEOUT; it
# joined from 585 / 750. Refused below 630 / 790, ~45 MB over the largest crash: the error line comes before the join,
# and the one-thread child that tells the others (cluster.tell_the_others) can join under a limit between the two.
JOIN_ADDRESS_SPACE = 90 << 20
M_ARENA_MAX = -8  # glibc's mallopt parameter


def check_address_space(command="train", joining=False):
    """Under a finite ``ulimit -v``: one malloc arena (glibc reserves 64 MB of address space for each thread's own
    arena, which is what an address-space limit counts: ~850 MB became ~600 MB needed), and one error line if the
    limit is below what ``command`` (a key of :data:`MIN_ADDRESS_SPACE`) needs with its threads (``joining``: and to
    join its cluster, :data:`JOIN_ADDRESS_SPACE`)."""
    import ctypes
    import resource

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return
    try:
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1)
    except (OSError, AttributeError):  # not glibc: its arenas are not these
        pass
    cpus = _usable_cpus()
    openmp = openmp_threads(cpus)
    blas = min(cpus, _env_threads("OPENBLAS_NUM_THREADS") or openmp)  # OpenBLAS starts no more than the CPUs
    threads = max(openmp, blas) if command == "train" else blas
    one, two = MIN_ADDRESS_SPACE.get(command, MIN_ADDRESS_SPACE["train"])
    need = (one if max(openmp, blas) == 1 else two) + THREAD_ADDRESS_SPACE * max(0, threads - 2)
    need += JOIN_ADDRESS_SPACE if joining else 0
    if limit < need:
        raise FastTextError(f"MXNet needs about {need >> 20:,} MB of address space to {command} ({threads} "
                            f"thread{'s' if threads != 1 else ''}{', joining its cluster' if joining else ''}), and "
                            f"this process may use {limit >> 20:,} MB at most (ulimit -v): raise that limit "
                            f"(ulimit -v unlimited)")
    _map_blas_buffers()


def check_room_to_join(kvstore):
    """Where training with ``kvstore`` joins a cluster (process_limits.joins_a_cluster): one :class:`FastTextError`,
    before the join, if this process has no room for the join's threads or address space (the join aborted, exit 134,
    and the other workers waited FASTTEXT_CLUSTER_TIMEOUT). Not in :func:`start_mxnet`, where the kvstore is not yet
    known (a worker's host trained alone with ``--kvstore local`` was refused for a join it never makes). Refused
    here, MXNet counts as unable to start (:func:`cannot_start`): the worker tells the others from a child of one
    thread each, which needs less."""
    if not joins_a_cluster(kvstore):
        return
    try:
        check_threads("train", joining=True)
        check_address_space("train", joining=True)
    except FastTextError:
        _REFUSED.append(True)
        raise


def _map_blas_buffers():
    """numpy's OpenBLAS maps a 32 MB buffer for each of its threads at its first product and keeps them; where the
    address space has no room left for one, it retries for ever (``blas_memory_alloc`` -> ``alloc_mmap``), deaf to
    SIGTERM and Ctrl-C: evaluate hung under 660-680 MB of ``ulimit -v``. One product at the start, while there is
    room, maps them for the run; large enough that OpenBLAS splits it over its threads, each of which maps its own."""
    import numpy as np

    square = np.ones((512, 512), dtype=np.float32)
    square @ square


def _drop_exit_hook():
    """An engine that never started has nothing to shut down, and asked to (MXNet's exit hook) it failed again, or,
    with MXNET_CPU_WORKER_NTHREADS=0, waited forever after the error line."""
    import atexit

    hook = getattr(sys.modules.get("mxnet.base"), "_notify_shutdown", None)
    if hook is not None:
        atexit.unregister(hook)
    _STARTED[0] = False


def _hint():
    """What to look at when MXNet cannot load or start: its environment variables, and a memory limit if one is set."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit != resource.RLIM_INFINITY:
        return (f"; this process may use {limit:,} bytes of address space at most (ulimit -v): raise that limit, "
                f"and check the MXNET_* and OMP_* environment variables")
    return "; check the MXNET_* and OMP_* environment variables (MXNET_ENGINE_TYPE, thread counts of at least 1)"


def quiet_exit_hook():
    """After an error line: MXNet's exit hook (``mxnet.base._notify_shutdown``), failing again (an engine that could
    not start, no thread left under ``ulimit -v``), printed 'Exception ignored in atexit callback' and a traceback
    below that line. Its errors are dropped from now on (the process is ending, having said what went wrong)."""
    import atexit

    hook = getattr(sys.modules.get("mxnet.base"), "_notify_shutdown", None)
    if hook is None or not _STARTED[0]:
        return
    atexit.unregister(hook)

    def quietly():
        try:
            hook()
        except Exception:  # noqa: BLE001 - see above
            pass

    atexit.register(quietly)
