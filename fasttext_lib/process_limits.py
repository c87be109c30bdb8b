"""Process limits other than the address space (that is mxnet_env.check_address_space's): the threads a process may
start, checked before MXNet starts its own.

MXNet's engine and OpenMP start their threads where a failure cannot be caught: a std::thread that cannot start
aborts the process ("terminate called without an active exception", exit 134) and libgomp's "Thread creation failed"
ends it (a segfault or an abort after it), with no line of ours. ``MXNET_CPU_WORKER_NTHREADS=40000`` did so on a
machine whose kernel allows 32,768 (pid_max), and ``OMP_NUM_THREADS=100`` in a container limited to 60 tasks (a
cgroup's pids.max: docker --pids-limit, a Kubernetes pod's limit); so would a user's ``ulimit -u``.
:func:`check_threads` counts what the settings ask for and refuses, in one line, a count the process cannot have.
"""
import os

from .errors import FastTextError

# The threads a command's process runs besides the ones counted from the settings (measured with MXNet 1.9.1 on the
# built-in sample, one CPU worker, 4 priority workers, OpenMP and OpenBLAS at 2: train's process peaked at 9 threads,
# predict's at 7): the main thread, and training's batch prefetcher.
OWN_THREADS = {"train": 2}
DEFAULT_OWN_THREADS = 1
# numpy's and MXNet's OpenBLAS are built for 64 threads at most (NUM_THREADS=64): on a machine with more CPUs they
# start no more.
OPENBLAS_MAX_THREADS = 64
# MXNet 1.9.1's defaults for its CPU engine's thread pools.
MXNET_THREADS = {"MXNET_CPU_WORKER_NTHREADS": 1, "MXNET_CPU_PRIORITY_NTHREADS": 4}
# The threads a cluster's worker starts as it joins (mx.kv.create: ps-lite's and ZeroMQ's; measured with MXNet 1.9.1,
# 6 threads before the join, 10 after): one that cannot start aborted the join after start_mxnet had passed (ZeroMQ's
# "Resource temporarily unavailable", exit 134), untold, and the other workers waited FASTTEXT_CLUSTER_TIMEOUT.
JOIN_THREADS = 4


# What MXNet's parameter-server kvstores (dist_sync, dist_async) read to find their cluster: the scheduler's address,
# and how many servers and workers to wait for (MXNet's tools/launch.py and SageMaker's MXNet toolkit set them).
DIST_ENVIRONMENT = ("DMLC_PS_ROOT_URI", "DMLC_PS_ROOT_PORT", "DMLC_NUM_SERVER", "DMLC_NUM_WORKER")


def joins_a_cluster(kvstore):
    """Whether training with ``kvstore`` in this process joins a parameter-server cluster: a ``dist_*`` kvstore in a
    cluster's worker (``DMLC_ROLE=worker``, as MXNet's tools/launch.py and SageMaker's toolkit start it, with the
    cluster's :data:`DIST_ENVIRONMENT`: without it a dist_* kvstore is refused before the join,
    cluster.check_kvstore_environment). Any other kvstore joins nothing, whatever the environment: a DMLC_ROLE left in
    a shell's environment, or a worker's host trained alone with ``--kvstore local``, was charged the join's threads
    and address space, and refused under a limit it trains in."""
    return (str(kvstore).startswith("dist") and os.environ.get("DMLC_ROLE") == "worker"
            and not missing_cluster_variables())


def missing_cluster_variables(environ=None):
    """Those of :data:`DIST_ENVIRONMENT` that ``environ`` (default: this process's) does not set, or sets empty."""
    environ = os.environ if environ is None else environ
    return [name for name in DIST_ENVIRONMENT if not environ.get(name)]


_CGROUP = "/proc/self/cgroup"
_CGROUP_ROOTS = {"v2": "/sys/fs/cgroup", "v1": "/sys/fs/cgroup/pids"}
_THREADS_MAX = "/proc/sys/kernel/threads-max"
_PID_MAX = "/proc/sys/kernel/pid_max"
_LOADAVG = "/proc/loadavg"
_PROC = "/proc"


def env_threads(name):
    """The positive whole number of threads the environment variable ``name`` asks for; None when unset (or not
    such a number: mxnet_env.check_environment refuses those first)."""
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def usable_cpus():
    """The CPUs this process may run on (a container's cpuset, taskset), as many as OpenMP starts threads for by
    default: not os.cpu_count(), the host's (a 2-CPU container on a 96-CPU host was refused below 1,452 MB)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # (not Linux)
        return os.cpu_count() or 1


def openmp_threads(cpus=None):
    """The threads an OpenMP team starts: ``OMP_NUM_THREADS``, else one a usable CPU (``cpus``: their number, when
    known)."""
    return env_threads("OMP_NUM_THREADS") or cpus or usable_cpus()


def threads_needed(command, joining=False):
    """``(threads, what)``: how many threads ``command``'s process starts with these settings (``joining``: and its
    cluster's, :func:`joins_a_cluster`), and the settings that ask for more than one (e.g.
    ``["OMP_NUM_THREADS=100"]``) to name in an error."""
    cpus = usable_cpus()
    openmp = openmp_threads(cpus)
    blas = min(cpus, OPENBLAS_MAX_THREADS, env_threads("OPENBLAS_NUM_THREADS") or openmp)  # no more than the CPUs
    counts = {name: env_threads(name) or default for name, default in MXNET_THREADS.items()}
    threads = OWN_THREADS.get(command, DEFAULT_OWN_THREADS) + (blas - 1) + sum(counts.values())
    if command == "train":  # its operators run in an OpenMP team; the commands that predict score with numpy
        threads += openmp - 1
        counts["OMP_NUM_THREADS"] = openmp
    what = [f"{name}={os.environ[name].strip()}" for name in counts if os.environ.get(name, "").strip()]
    if joining:
        threads += JOIN_THREADS
        what.append(f"{JOIN_THREADS} to join its cluster")
    return threads, what


def _read_int(path):
    with open(path) as f:
        text = f.read().strip()
    return None if text == "max" else int(text)


def _cgroup_pids_dirs():
    """The pids controller's directories of this process's cgroup and of its ancestors (v2's unified hierarchy, or
    v1's pids hierarchy), innermost first."""
    try:
        with open(_CGROUP) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and controllers == "":
            root = _CGROUP_ROOTS["v2"]
        elif "pids" in controllers.split(","):
            root = _CGROUP_ROOTS["v1"]
        else:
            continue
        dirs, path = [], path.strip("/")
        while True:
            dirs.append(os.path.join(root, path) if path else root)
            if not path:
                return dirs
            path = os.path.dirname(path)
    return []


def thread_room():
    """``(threads, why)``: how many more threads (tasks) this process may start, and the limit that says so; None
    where no limit can be read. The smallest of: a cgroup's pids.max less its pids.current (this cgroup's or an
    ancestor's), ``ulimit -u`` less this user's tasks, the kernel's threads-max and pid_max less the threads running
    on the machine."""
    rooms = [room for room in (_user_task_room(),) if room is not None]
    for where in _cgroup_pids_dirs():
        try:
            limit, used = _read_int(os.path.join(where, "pids.max")), _read_int(os.path.join(where, "pids.current"))
        except (OSError, ValueError, TypeError):
            continue
        if limit is not None and used is not None:
            rooms.append((limit - used, f"the container's task limit: {where}/pids.max is {limit:,}, {used:,} in use"))
    try:
        with open(_LOADAVG) as f:
            running = int(f.read().split()[3].split("/")[1])  # every thread on the machine
        for path, name in ((_THREADS_MAX, "kernel.threads-max"), (_PID_MAX, "kernel.pid_max")):
            limit = _read_int(path)
            if limit is not None:
                rooms.append((limit - running, f"{name} is {limit:,}, {running:,} threads running"))
    except (OSError, ValueError, IndexError):
        pass
    return min(rooms) if rooms else None


def _user_task_room():
    """``(threads, why)`` under ``ulimit -u`` (RLIMIT_NPROC, which counts every process and thread of this process's
    real user: a thread it would take fails to start, and MXNet aborted, exit 134); None where it is unlimited or not
    enforced (root's tasks: the kernel does not count them against it)."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    except (ImportError, AttributeError, OSError):  # (not Linux)
        return None
    uid = os.getuid()
    if limit == resource.RLIM_INFINITY or uid == 0:
        return None
    used = _user_tasks(uid)
    return limit - used, f"ulimit -u is {limit:,}, this user's processes and threads: {used:,} running"


def _user_tasks(uid):
    """The threads (each process's ``Threads``) of the processes whose real user is ``uid``, as /proc shows them."""
    count = 0
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(_PROC, name, "status")) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, ValueError, KeyError, IndexError):  # (a process that ended as it was read)
            continue
    return count


def _own_threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def check_threads(command="train", joining=False):
    """One :class:`FastTextError` where ``command``'s process (``joining``: and its cluster's join) would start more
    threads than it may (see the module docstring); nothing where it may, or where no limit can be read."""
    need, what = threads_needed(command, joining)
    need -= _own_threads()  # (the threads running now are counted in the room's use already)
    room = thread_room()
    if room is None or need <= room[0]:
        return
    asked = f" ({', '.join(what)})" if what else ""
    raise FastTextError(f"this process would start about {need:,} more threads to {command}{asked}, and it may start "
                        f"{max(0, room[0]):,} more ({room[1]}): lower OMP_NUM_THREADS / MXNET_CPU_WORKER_NTHREADS / "
                        f"MXNET_CPU_PRIORITY_NTHREADS, or raise that limit")
