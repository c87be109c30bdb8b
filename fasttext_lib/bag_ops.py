"""fastText's inner loops as native MXNet operators on the CPU (``bag_ops.cc``), built on first use.

Why: a bigram batch of 1,024 reviews touches ~110k rows of a 2M-row table through ~260k bag
entries. MXNet's generic route (``take`` the rows, ``dot(csr, dense)`` forward, ``dot(csr_t,
dense)`` backward, which needs the batch transposed in numpy) makes three passes over those rows
plus the transpose; ``fasttext_bag_mean`` reads each entry's row straight from the table once, and
``fasttext_bag_mean_backward`` transposes inside the operator and writes each gradient row once.
Both give bit-for-bit the same numbers as the generic route (the same sums in the same order).

The operators use MXNet's own extension mechanism (``include/mxnet/lib_api.h`` and
``src/lib_api.cc``, which the mxnet wheels ship) and are loaded with ``mx.library.load``, so they
take and return ordinary NDArrays and run on MXNet's engine. They are built once per machine with
the system C++ compiler into a cache directory (``FASTTEXT_LIB_CACHE``, default
``~/.cache/fasttext_lib``), keyed by a hash of the sources, the flags and the MXNet version.

CPU only: a GPU context, ``FASTTEXT_LIB_BAG_OPS=0``, or a machine without a compiler use the
generic MXNet operators instead (the same results at the same OpenMP thread count, slower on CPU), as
does ``FASTTEXT_LIB_NATIVE=0`` (which turns off all native code); :func:`status` says which and why. On
that route the output layer's gradient is summed by oneDNN over as many threads as OpenMP has: with 3 or
more (MXNet's default on 6+ CPUs) the last bits of the parameters differ from the native route's, and
from runs with another thread count. The native operators pin their engine thread, so the native
route's results do not depend on the thread count (tests/test_bag_ops.py).
"""
import os
import sys
import threading

from . import native_build

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bag_ops.cc")
CXXFLAGS = ["-O3", "-std=c++17", "-fopenmp", "-shared", "-fPIC"]
ENV_SWITCH = "FASTTEXT_LIB_BAG_OPS"  # "0": never build or use the native operators (FASTTEXT_LIB_NATIVE=0 too)

_lock = threading.Lock()
_state = {"loaded": None, "reason": None}  # loaded: None (not tried yet), True or False


def _mxnet_files():
    import mxnet as mx

    root = os.path.dirname(os.path.abspath(mx.__file__))
    header = os.path.join(root, "include", "mxnet", "lib_api.h")
    glue = os.path.join(root, "src", "lib_api.cc")
    return mx.__version__, os.path.join(root, "include"), [header, glue]


def build():
    """Compile the operator library if it is not cached yet; returns its path (see native_build.py).

    Raises ``RuntimeError`` (with the compiler's message) when it cannot be built.
    """
    version, include, inputs = _mxnet_files()
    missing = [p for p in inputs if not os.path.isfile(p)]
    if missing:
        raise RuntimeError(f"this mxnet install lacks {', '.join(missing)}")
    header, glue = inputs
    return native_build.build("fasttext_bag_ops", [SOURCE, glue], CXXFLAGS + ["-I", include], headers=[header],
                              key=f"mxnet {version}")


def switched_off():
    return native_build.switch_is_off(ENV_SWITCH) or native_build.switch_is_off(native_build.MASTER_SWITCH)


def available():
    """Whether the native operators are in use (building and loading them on the first call).

    ``FASTTEXT_LIB_BAG_OPS=0`` turns them off, read on every call (the generic path is then used
    even if the library is already loaded).
    """
    if switched_off():
        return False
    with _lock:
        if _state["loaded"] is None:
            _state["loaded"], _state["reason"] = _load()
            if not _state["loaded"]:
                print(f"fasttext_lib: native bag operators unavailable ({_state['reason']}); "
                      f"using MXNet's generic sparse operators (slower on CPU; the results' last bits depend on the OpenMP "
                      f"thread count: set OMP_NUM_THREADS to reproduce a run)", file=sys.stderr)
        return _state["loaded"]


def status():
    """``(available, reason)``: why the native operators are or are not in use."""
    if switched_off():
        name = ENV_SWITCH if native_build.switch_is_off(ENV_SWITCH) else native_build.MASTER_SWITCH
        return False, f"{name}={os.environ[name]}"
    return available(), _state["reason"]


def _load():
    import mxnet as mx

    if hasattr(mx.nd, "fasttext_bag_mean"):  # already loaded in this process
        return True, "loaded"
    try:
        path = build()
        _load_library(path)
    except (RuntimeError, OSError, mx.base.MXNetError) as exc:
        return False, str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
    return True, f"loaded {path}"


OPERATORS = ("fasttext_bag_mean", "fasttext_bag_mean_backward", "fasttext_bag_sgd_update", "fasttext_engine_threads")


def _load_library(path):
    """``mx.library.load`` for our operators only.

    ``mx.library.load`` regenerates the Python function of every one of MXNet's ~2,000 operators
    (ndarray and symbol) after loading a library: seconds of a short run's fixed cost. This loads
    the library the same way (``MXLoadLib``) and makes the ``mx.nd`` functions of our operators,
    which is all that this library calls.
    """
    import ctypes

    import mxnet as mx
    from mxnet.base import _LIB, OpHandle, c_str, check_call, mx_uint
    from mxnet.ndarray.register import _make_ndarray_function

    if not os.path.isabs(path) or not os.path.isfile(path):
        raise mx.base.MXNetError(f"no library at {path}")
    check_call(_LIB.MXLoadLib(c_str(path), mx_uint(0)))
    for name in OPERATORS:
        handle = OpHandle()
        check_call(_LIB.NNGetOpHandle(c_str(name), ctypes.byref(handle)))
        function = _make_ndarray_function(handle, name, name)
        function.__module__ = "mxnet.ndarray"
        setattr(mx.nd.op, name, function)
        setattr(mx.nd, name, function)


if __name__ == "__main__":  # python -m fasttext_lib.bag_ops: build (or find) the library and say where
    ok, why = status()
    print(why)
    sys.exit(0 if ok else 1)
