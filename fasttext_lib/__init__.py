"""fasttext_lib: the FastText "bag of tricks" classifier in MXNet Gluon + GluonNLP.

Read it as README.md's section "The library (`fasttext_lib/`), in reading order" lists it: data -> features -> model
-> training -> bundle -> serving (predict; sm_serve behind entry_point); docs/ARCHITECTURE.md shows how they fit.
``import fasttext_lib`` imports numpy alone: mxnet, gluonnlp and sagemaker are imported by the modules that need
them (model.py and table_memory.py at their top, the others inside functions).
"""
__version__ = "0.1.0"

import os as _os
import sys as _sys


def _imported_to_run_the_command():
    """Whether this import is the command line's start: Python's ``-m fasttext_lib`` (runpy._run_module_as_main, which
    Python's own C code calls for ``-m``, imports the package to find its __main__) or the ``fasttext-lib`` script pip
    writes (the __main__ module, whose ``from fasttext_lib.cli import run`` this is). Not any other import (a
    notebook's, a script's, a module of ours run with ``-m``): their signal handlers are theirs."""
    if _os.path.basename(getattr(_sys.modules.get("__main__"), "__file__", None) or "") == "fasttext-lib":
        return True
    as_main = getattr(getattr(_sys.modules.get("runpy"), "_run_module_as_main", None), "__code__", None)
    frame = _sys._getframe(1) if as_main is not None else None
    while frame is not None:
        if frame.f_code is as_main:
            return frame.f_locals.get("mod_name") in (__name__, f"{__name__}.__main__")
        frame = frame.f_back
    return False


# A stop while the command starts is one line from here on, not only once cli.run has armed its handler: this
# package's import (numpy's, below: ~0.15 s) came before it, and a SIGTERM then killed the command without a line,
# a Ctrl-C printed Python's traceback through the import. (stops imports nothing heavy; cli.run takes the handlers
# over and puts back the ones they replaced.)
if _imported_to_run_the_command():
    from .stops import stop_at_once_on_signals as _stop_at_once_on_signals

    _stop_at_once_on_signals()
# So is a SageMaker training job's (``python fasttext_lib/entry_point.py``, whose ``from fasttext_lib.sm_serve ...``
# this is, then MXNet's start: ~1 s): a StopTrainingJob or spot interruption then killed it with status -15, no line
# and no FailureReason of ours. Its line goes to the job's failure file too; the endpoint, which imports entry_point
# as a module, keeps its handlers (RUNS_THE_TRAINING_JOB is read only in the module run as the script).
elif getattr(_sys.modules.get("__main__"), "RUNS_THE_TRAINING_JOB", False) is True:
    from .stops import job_failure_file as _job_failure_file, stop_at_once_on_signals as _stop_at_once_on_signals

    _stop_at_once_on_signals(failure_file=_job_failure_file())

# OpenMP threads that wait for work by sleeping, not spinning, unless the user chose a policy.
# MXNet's and bag_ops.cc's OpenMP regions are short (microseconds on short texts), and GNU OpenMP's
# default is to spin between them. On a machine that is also running anything else, a spinning
# thread holds a core the thread with the work needs, and every region can wait a time slice: 34k
# short texts at OMP_NUM_THREADS=2 took 12-25 s per epoch under a load of 6 on 2 cores, against
# 0.8-2 s with PASSIVE (docs/RESULTS.md, "OpenMP threads that sleep"). libgomp reads the variable
# once, when it is loaded with MXNet; ``import fasttext_lib`` comes first in the command line, the
# SageMaker job and the notebooks (where MXNet is already imported, this changes nothing).
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# glibc's threads take a stack of ``ulimit -s``'s size (read once, when the process started). Under a limit larger
# than the memory the kernel will map at once (``ulimit -s`` of 1 TiB: tried) no thread could start: numpy's OpenBLAS
# failed at its import ('PyCapsule_Import could not import module "datetime"', a traceback) and MXNet's engine
# aborts. So the threads started from now on (numpy's, MXNet's, OpenMP's, Python's) get glibc's usual 8 MiB when the
# limit is above it; the main thread keeps the limit. Before numpy's import (below), which starts OpenBLAS's.
THREAD_STACK = 8 << 20


def _thread_stacks_of_8_mib():
    import resource

    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    if soft == resource.RLIM_INFINITY or soft <= THREAD_STACK:  # (unlimited: glibc's 2 MiB)
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        attr = ctypes.create_string_buffer(256)  # a pthread_attr_t (56 bytes on glibc's 64-bit platforms)
        if libc.pthread_getattr_default_np(attr) == 0:
            libc.pthread_attr_setstacksize(attr, ctypes.c_size_t(THREAD_STACK))
            libc.pthread_setattr_default_np(attr)
            libc.pthread_attr_destroy(attr)
    except (OSError, AttributeError):  # not glibc (2.18 or later): its threads are as they were
        pass


_thread_stacks_of_8_mib()


def _restore_numpy_aliases():
    """Let MXNet 1.9.1 import under NumPy 1.24-1.26 (the NumPy of Python 3.12, which has no 1.23).

    MXNet 1.9 uses ``np.bool`` (and ``np.int`` in ``test_utils``), aliases of the builtins that NumPy
    deprecated in 1.20 and removed in 1.24; ``import mxnet`` then fails with an AttributeError. Each
    alias was the builtin itself, so restoring it changes nothing MXNet or anyone else computes. Only
    names the module lacks are set (NumPy 1.20-1.23 serve them with a DeprecationWarning, which this
    silences); NumPy 2 has ``np.bool`` again (as ``np.bool_``), but MXNet 1.9 requires NumPy < 2.
    This runs on ``import fasttext_lib``, before any of its modules imports MXNet; in a notebook,
    import fasttext_lib before mxnet (or MXNet's own import fails first under NumPy >= 1.24)."""
    import numpy

    for name, builtin in (("bool", bool), ("int", int), ("float", float), ("complex", complex),
                          ("object", object), ("str", str)):
        if name not in vars(numpy):
            setattr(numpy, name, builtin)


_restore_numpy_aliases()
