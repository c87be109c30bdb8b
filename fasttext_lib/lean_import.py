"""Import MXNet lean, in the processes this library starts (the CLI, the SageMaker job).

Three fixed costs of ``import mxnet`` (1.9.1) that a short run pays and never uses:

* SciPy. ``mxnet/__init__.py`` imports ``test_utils``, which tries ``import scipy.stats``, and
  ``ndarray/sparse.py`` / ``ndarray/utils.py`` try ``import scipy.sparse``. All three catch
  ``ImportError`` and only lose MXNet's SciPy interop (``CSRNDArray.asscipy()``, building a CSR
  array from a SciPy matrix or a COO tuple), which training and prediction never use. SciPy is
  ~475 modules and ~53 MB of a process's peak memory (VmHWM 184 -> 131 MB for ``import mxnet``
  alone): at Yelp scale with unigrams that is a fifth of the whole run, and fastText C++'s entire
  run is 165 MB. So ``scipy`` is unimportable while ``import mxnet`` runs; afterwards
  ``import scipy`` works as always (MXNet's own modules keep ``spsp = None``).
* Operator wrappers. MXNet writes the source of a Python function for each of its ~1,900
  operators, once per namespace (``mx.nd``, ``mx.sym``, ``mx.np``, ``mx.nd.np``, ``mx.sym.np``,
  ``mx.npx`` ...), and compiles it with ``exec``: ~60% of the import, of which a run calls a few
  dozen. Here each is a :class:`_LazyOp` stand-in, registered under the same name, module and
  ``__all__``, that generates MXNet's own function on its first call (or ``__doc__`` read).
* ``requests`` (~80 ms), imported by ``mxnet/gluon/utils.py`` for model-zoo downloads, and
  ``mxnet.contrib.text`` / ``mxnet.contrib.onnx`` (~115 ms together), imported by ``mxnet/contrib``:
  loaded lazily (``importlib.util.LazyLoader``), executed on first attribute use (:data:`LAZY_MODULES`).
* ``distutils`` (~90 ms): MXNet compares NumPy versions with ``distutils.version``, and with
  setuptools installed ``import distutils`` loads setuptools' whole copy of it. While ``import
  mxnet`` runs, ``distutils.version`` alone is served (:func:`_distutils_version_alone`); afterwards
  ``distutils`` imports as always.

Only for the MXNet this was written against (:data:`PINNED_MXNET`: the stand-ins replace copies of
its ``mxnet.base._init_op_module`` / ``_init_np_op_module``); any other version, or any failure of
the machinery, imports MXNet its own way. :func:`import_mxnet_lean` is called by the command line
(``python -m fasttext_lib``, the ``fasttext-lib`` script) and the SageMaker training entry point,
never by ``import fasttext_lib``: in a notebook the import is the user's.
"""
import importlib
import importlib.abc
import importlib.util
import os
import re
import sys
import types

PINNED_MXNET = "1.9.1"
OPS_MADE = []  # "module.name" of each operator function this process has made, in order (diagnostics, tests)


class _NoScipy(importlib.abc.MetaPathFinder):
    """Answers every ``scipy`` / ``scipy.*`` import with ModuleNotFoundError (an ImportError, which
    is what MXNet's ``try: import scipy...`` blocks catch)."""

    def find_spec(self, name, path=None, target=None):
        if name == "scipy" or name.startswith("scipy."):
            raise ModuleNotFoundError(f"No module named {name!r} (left out while MXNet is imported)", name=name)
        return None


def _mxnet_version():
    """The ``mxnet.__version__`` an import would give (``mxnet/libinfo.py``), without importing it:
    the same for every distribution of it (mxnet, mxnet-cu110, ...). None if it cannot be read."""
    try:
        spec = importlib.util.find_spec("mxnet")
        with open(os.path.join(spec.submodule_search_locations[0], "libinfo.py"), encoding="utf-8") as f:
            return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)
    except Exception:  # noqa: BLE001 - unknown layout: not the pinned version
        return None


class _LazyOp:
    # A stand-in for one generated operator function (see the module docstring). It behaves as the
    # function: called, documented (``help``, ``__doc__``, ``inspect.signature``), bound as a method,
    # pickled by name; anything else is read from the function, generated on first need by MXNet's
    # own ``make_op_func`` exactly as the eager import would have (same name, module, docstring).
    # Once made, the function replaces the stand-in in the modules that hold it under its name, so
    # later calls (every training step) go to it directly.
    # (No class docstring: ``__doc__`` is the operator's.)

    def __init__(self, make_op_func, handle, op_name, func_name, module_name, home, fix_doc=None):
        self._lazy_make = make_op_func
        self._lazy_args = (handle, op_name, func_name)
        self._lazy_home = home  # the module it is registered in (__module__ is MXNet's choice, e.g. "ndarray")
        self._lazy_fix_doc = fix_doc  # what _init_np_op_module does to the docstring, applied when made
        self._lazy_function = None
        self.__name__ = self.__qualname__ = func_name
        self.__module__ = module_name

    def _lazy_real(self):
        function = self._lazy_function
        if function is None:
            function = self._lazy_make(*self._lazy_args)
            function.__module__ = self.__module__
            if self._lazy_fix_doc is not None:
                function.__doc__ = self._lazy_fix_doc(function.__doc__)
            if "_lazy_signature" in self.__dict__:
                function.__signature__ = self.__dict__["_lazy_signature"]
            self._lazy_function = function
            OPS_MADE.append(f"{self._lazy_home}.{self.__name__}")
            self._lazy_put_in_place(function)
        return function

    def _lazy_put_in_place(self, function):
        """In its module and the packages above it (``from .op import *`` copied it to mx.nd)."""
        name, module_name = self.__name__, self._lazy_home
        while module_name:
            module = sys.modules.get(module_name)
            if module is not None and vars(module).get(name) is self:
                setattr(module, name, function)
            module_name = module_name.rpartition(".")[0]

    def __call__(self, *args, **kwargs):
        return (self._lazy_function or self._lazy_real())(*args, **kwargs)

    def _get_doc(self):
        return self._lazy_real().__doc__

    def _set_doc(self, doc):  # MXNet edits a few docstrings at import (adamw_update's): make those
        self._lazy_real().__doc__ = doc

    __doc__ = property(_get_doc, _set_doc)

    def _get_signature(self):  # set for the np operators at import (numpy_op_signature.py)
        signature = self.__dict__.get("_lazy_signature")
        if signature is None:
            import inspect

            signature = inspect.signature(self._lazy_real())
        return signature

    def _set_signature(self, signature):
        self.__dict__["_lazy_signature"] = signature
        if self._lazy_function is not None:
            self._lazy_function.__signature__ = signature

    __signature__ = property(_get_signature, _set_signature)

    @property
    def __class__(self):  # isinstance(op, types.FunctionType), as pydoc and inspect ask
        return types.FunctionType

    def __get__(self, instance, owner=None):  # as a class attribute it binds, like a function
        return self if instance is None else types.MethodType(self, instance)

    def __getattr__(self, name):  # only for names not found above: __code__, __defaults__, ...
        if name.startswith("_lazy"):  # not set (a copy under construction): no recursion
            raise AttributeError(name)
        return getattr(self._lazy_real(), name)

    def __reduce__(self):  # pickled by reference, as functions are
        return self.__qualname__

    def __repr__(self):
        return f"<function {self.__qualname__} at {id(self):#x}>"


def _register(stand_ins):
    """What both registration loops end with, once every stand-in could be made."""
    for module, function in stand_ins:
        setattr(module, function.__name__, function)
        module.__all__.append(function.__name__)


def _all_op_names(base):
    import ctypes

    plist = ctypes.POINTER(ctypes.c_char_p)()
    size = ctypes.c_uint()
    base.check_call(base._LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(plist)))
    return [base.py_str(plist[i]) for i in range(size.value)]


def _op_handle(base, name):
    import ctypes

    handle = base.OpHandle()
    base.check_call(base._LIB.NNGetOpHandle(base.c_str(name), ctypes.byref(handle)))
    return handle


def _lazy_init_op_module(base, root_namespace, module_name, make_op_func):
    """``mxnet.base._init_op_module`` of MXNet 1.9.1, registering stand-ins."""
    modules = sys.modules
    module_op = modules["%s.%s.op" % (root_namespace, module_name)]
    module_internal = modules["%s.%s._internal" % (root_namespace, module_name)]
    contrib_module_name_old = "%s.contrib.%s" % (root_namespace, module_name)
    contrib_module_old = modules[contrib_module_name_old]
    submodule_dict = {prefix: modules["%s.%s.%s" % (root_namespace, module_name, prefix[1:-1])]
                      for prefix in base._OP_NAME_PREFIX_LIST}
    stand_ins = []
    for name in _all_op_names(base):
        if base._is_np_op(name):
            continue
        prefix = base._get_op_name_prefix(name)
        module_name_local = module_name
        if len(prefix) > 0:
            if prefix != "_random_" or name.endswith("_like"):
                func_name = name[len(prefix):]
                cur_module = submodule_dict[prefix]
                module_name_local = "%s.%s.%s" % (root_namespace, module_name, prefix[1:-1])
            else:
                func_name = name
                cur_module = module_internal
        elif name.startswith("_"):
            func_name = name
            cur_module = module_internal
        else:
            func_name = name
            cur_module = module_op
        handle = _op_handle(base, name)
        stand_ins.append((cur_module, _LazyOp(make_op_func, handle, name, func_name, module_name_local,
                                              cur_module.__name__)))
        if prefix == "_contrib_":  # also (a second function) in the deprecated mx.contrib.nd / .sym
            stand_ins.append((contrib_module_old, _LazyOp(make_op_func, handle, name, func_name,
                                                          contrib_module_name_old, contrib_module_name_old)))
    _register(stand_ins)


def _np_doc_fix(np_op_doc, name):
    """The docstring edit ``_init_np_op_module`` makes to each np operator it registers."""
    if hasattr(np_op_doc, name):
        doc = getattr(np_op_doc, name).__doc__
        return lambda _generated: doc
    return lambda generated: re.sub("NDArray", "ndarray", generated)


def _lazy_init_np_op_module(base, root_module_name, np_module_name, mx_module_name, make_op_func):
    """``mxnet.base._init_np_op_module`` of MXNet 1.9.1, registering stand-ins."""
    np_op_doc = importlib.import_module(base.__package__ + "._numpy_op_doc")
    if np_module_name == "numpy":
        op_name_prefix, submodule_name_list = base._NP_OP_PREFIX, base._NP_OP_SUBMODULE_LIST
    elif np_module_name == "numpy_extension":
        op_name_prefix, submodule_name_list = base._NP_EXT_OP_PREFIX, base._NP_EXT_OP_SUBMODULE_LIST
    elif np_module_name == "numpy._internal":
        op_name_prefix, submodule_name_list = base._NP_INTERNAL_OP_PREFIX, []
    else:
        raise ValueError("unsupported np module name {}".format(np_module_name))
    if mx_module_name is None:
        op_module_name = "%s.%s._op" % (root_module_name, np_module_name)
        op_submodule_name = "%s.%s" % (root_module_name, np_module_name)
    elif mx_module_name in ("ndarray", "symbol"):
        op_module_name = "%s.%s.%s" % (root_module_name, mx_module_name, np_module_name)
        if op_name_prefix != base._NP_INTERNAL_OP_PREFIX:
            op_module_name += "._op"
        op_submodule_name = "%s.%s.%s" % (root_module_name, mx_module_name, np_module_name)
    else:
        raise ValueError("unsupported mxnet module {}".format(mx_module_name))
    op_submodule_name += ".%s"

    op_module = sys.modules[op_module_name]
    submodule_dict = {sub: sys.modules[op_submodule_name % sub[1:-1]] for sub in submodule_name_list}
    stand_ins = []
    for name in _all_op_names(base):
        if not name.startswith(op_name_prefix):
            continue
        submodule_name = base._get_op_submodule_name(name, op_name_prefix, submodule_name_list)
        if len(submodule_name) > 0:
            func_name = name[(len(op_name_prefix) + len(submodule_name)):]
            cur_module = submodule_dict[submodule_name]
            module_name_local = op_submodule_name % submodule_name[1:-1]
        else:
            func_name = name[len(op_name_prefix):]
            cur_module = op_module
            module_name_local = op_module_name[:-len("._op")] if op_module_name.endswith("._op") else op_module_name
        stand_ins.append((cur_module, _LazyOp(make_op_func, _op_handle(base, name), name, func_name,
                                              module_name_local, cur_module.__name__, _np_doc_fix(np_op_doc, name))))
    _register(stand_ins)


def _or_eager(lazy, eager, base):
    """``lazy`` in place of MXNet's ``eager`` registration; should it fail before registering
    anything (it registers only once every stand-in is made), MXNet's own runs instead."""
    def init(*args, **kwargs):
        try:
            return lazy(base, *args, **kwargs)
        except Exception:  # noqa: BLE001 - the lazy path must never break the import
            return eager(*args, **kwargs)
    init.__name__, init.__doc__ = eager.__name__, eager.__doc__
    return init


def _make_base_lazy(base):
    """Right after ``mxnet.base`` runs, before any module imports its registration functions."""
    base._init_op_module = _or_eager(_lazy_init_op_module, base._init_op_module, base)
    base._init_np_op_module = _or_eager(_lazy_init_np_op_module, base._init_np_op_module, base)


class _LazyLoader(importlib.util.LazyLoader):
    """``importlib.util.LazyLoader``, whose module also lets ``__spec__`` be read without loading it.

    MXNet imports ``requests`` twice (``test_utils``, ``gluon/utils``), and an ``import`` of a
    module already in ``sys.modules`` reads its ``__spec__`` (is it still initializing?): with the
    plain LazyLoader that second import alone would execute ``requests``."""

    def exec_module(self, module):
        super().exec_module(module)
        lazy_class = type(module)
        module.__class__ = type(lazy_class.__name__, (lazy_class,), {"__getattribute__": _spec_or_load})


def _spec_or_load(module, attr):
    if attr == "__spec__":
        return object.__getattribute__(module, "__dict__")["__spec__"]
    return super(type(module), module).__getattribute__(attr)  # LazyLoader's module: loads it


# Imported by ``import mxnet`` and executed only on first attribute use: ``requests`` (model-zoo downloads),
# ``mxnet.contrib.text`` (MXNet's own vocabulary and embeddings; this library uses GluonNLP's) and
# ``mxnet.contrib.onnx`` (ONNX import and export, which imports ``mxnet.onnx``): ~80, ~65 and ~50 ms of every
# process's start that training and prediction never use.
LAZY_MODULES = ("requests", "mxnet.contrib.text", "mxnet.contrib.onnx", "mxnet.contrib.quantization")


class _LazyMXNet(importlib.abc.MetaPathFinder):
    """While ``import mxnet`` runs: loads :data:`LAZY_MODULES` lazily, and patches ``mxnet.base`` (above)."""

    def find_spec(self, name, path=None, target=None):
        if name != "mxnet.base" and name not in LAZY_MODULES:
            return None
        try:
            spec = self._find_others(name, path, target)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return None
            if name in LAZY_MODULES:
                spec.loader = _LazyLoader(spec.loader)
            else:
                exec_module = spec.loader.exec_module

                def exec_then_patch(module):
                    exec_module(module)
                    try:
                        _make_base_lazy(module)
                    except Exception:  # noqa: BLE001 - left as MXNet made it
                        pass
                spec.loader.exec_module = exec_then_patch
            return spec
        except Exception:  # noqa: BLE001 - let the import system find it as usual
            return None

    def _find_others(self, name, path, target):
        """The spec the finders after this one give."""
        others = sys.meta_path[sys.meta_path.index(self) + 1:]
        for finder in others:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                return spec
        return None


class _distutils_version_alone:
    """While active (a context manager), ``import distutils.version`` gives that one module (setuptools'
    copy, else the standard library's), loaded from its file, without the rest of ``distutils``; the
    modules are taken out again afterwards, so that a later ``import distutils`` is the usual one.
    Nothing happens where ``distutils`` is already imported or no such file is found."""

    def __enter__(self):
        self.added = {}
        if "distutils" in sys.modules:
            return self
        try:
            path = self._version_file()
            spec = importlib.util.spec_from_file_location("distutils.version", path)
            version = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(version)
        except Exception:  # noqa: BLE001 - no such file, or it needs more of distutils: the usual import
            return self
        package = types.ModuleType("distutils")
        package.__path__, package.version = [], version
        self.added = {"distutils": package, "distutils.version": version}
        sys.modules.update(self.added)
        return self

    @staticmethod
    def _version_file():
        spec = importlib.util.find_spec("setuptools")  # finds, does not import
        if spec is not None and spec.submodule_search_locations:
            path = os.path.join(spec.submodule_search_locations[0], "_distutils", "version.py")
            if os.path.isfile(path):
                return path
        import sysconfig

        return os.path.join(sysconfig.get_paths()["stdlib"], "distutils", "version.py")

    def __exit__(self, *exc):
        for name, module in self.added.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
        return False


def forget_an_interrupted_import(package="mxnet"):
    """Let ``package`` be imported whole after an import of it that was interrupted.

    The first call into the library in a notebook (train, Predictor.load) imports MXNet, which takes seconds; the
    Stop button pressed then raises KeyboardInterrupt inside that import. Python takes the package out of
    ``sys.modules`` but keeps the submodules it had imported, and the next ``import mxnet`` runs the package again
    over them without making them its attributes: "module 'mxnet' has no attribute 'context'", a traceback at every
    call until the kernel was restarted. Those leftovers are dropped here, so that the next import is a fresh one.
    A no-op when the package is imported, or was never started."""
    if package in sys.modules:
        return
    prefix = package + "."
    for name in [name for name in list(sys.modules) if name.startswith(prefix)]:
        sys.modules.pop(name, None)


def import_mxnet_lean():
    """Import ``mxnet`` without SciPy, with lazy operator functions and ``requests``; a no-op when
    ``mxnet`` is already imported. SciPy imported already: MXNet gets it (the process chose)."""
    if "mxnet" in sys.modules:
        return
    finders = []
    if "scipy" not in sys.modules:
        finders.append(_NoScipy())
    if _mxnet_version() == PINNED_MXNET:
        finders.append(_LazyMXNet())
    sys.meta_path[:0] = finders
    try:
        with _distutils_version_alone():
            importlib.import_module("mxnet")
    finally:
        for finder in finders:
            sys.meta_path.remove(finder)
