"""The one exception type a user can cause, how an error is said, and the checks every module shares.

Everything a user can get wrong (a bad file, a missing bucket, a model that does not match its
vocabulary) is raised as :class:`FastTextError` with a one-line message; the CLI prints it as
``error: ...`` (:func:`error_line`) and exits non-zero without a traceback. Anything else is a bug and keeps its
traceback. An allocation that failed is the user's settings or data, not a bug (:func:`is_out_of_memory`), and is
said in one line too. A stop (Ctrl-C, SIGTERM, SIGHUP, SIGXCPU) is no error: stops.py turns it into a clean stop.

Also here, for every module: the shared checks (:func:`check_bool`, :func:`check_positive_int`,
:func:`refuse_standard_output`, :func:`refuse_standard_input`), :func:`did_you_mean`, the one "did you mean" hint
among fixed choices, and :func:`setting_named`, how a line names a setting (``--min-count`` on the command line,
``min_count`` in Python).
Imports nothing heavy (numpy only inside the checks): the command line imports it as it starts.
"""
import contextlib
import contextvars
import os
import sys


class FastTextError(Exception):
    """A user-caused failure with a one-line, actionable message."""


# How a line names a setting (a TrainConfig field; predict's and evaluate's --ctx too): as the user of its caller
# sets it (a warning is printed at once; a pretrained file of another dimension is refused deep inside train). A
# refusal raised inside train() is said again on its way out only where it is a checkpoint's
# (checkpoints.refusals_said_as_arguments, sm_train.in_job_terms). Here, not in config.py: devices.py names ctx so,
# and serving (predict.py) imports no training module.
SETTINGS_AS_FLAGS, SETTINGS_AS_ARGUMENTS, SETTINGS_AS_HYPERPARAMETERS = "flags", "arguments", "hyperparameters"
_SETTINGS_SAID_AS = contextvars.ContextVar("fasttext_lib_settings_said_as", default=None)


@contextlib.contextmanager
def settings_said_as(form):
    """Within the block, :func:`setting_named` and config.setting_said name settings as ``form``
    (:data:`SETTINGS_AS_FLAGS`, :data:`SETTINGS_AS_ARGUMENTS` or :data:`SETTINGS_AS_HYPERPARAMETERS`), unless a caller
    outside it said already: the command line's autotune calls train() as the Python API does, and its user still
    types flags."""
    token = _SETTINGS_SAID_AS.set(_SETTINGS_SAID_AS.get() or form)
    try:
        yield
    finally:
        _SETTINGS_SAID_AS.reset(token)


def settings_form():
    """How settings are said here (:func:`settings_said_as`'s ``form``); None where no caller said."""
    return _SETTINGS_SAID_AS.get()


def setting_named(name, value=None):
    """The setting ``name`` (a TrainConfig field) as a line that refuses or advises it names it (``min_count must be
    ...``, ``lower min_count``), with ``value`` if given, as the user of this run's caller sets it
    (:func:`settings_said_as`): ``--min-count`` / ``--batch-size 64`` on the command line; else the field's own name,
    ``min_count`` / ``batch_size=64``, both the Python API's argument and the training job's hyperparameter.
    (config.setting_said names it as a whole call instead: "train with TrainConfig(emsize=300)".) A float is said
    as ``%g`` (``lr=2``, not ``lr=2.0000000001``)."""
    flags = settings_form() == SETTINGS_AS_FLAGS
    named = flag_of(name) if flags else name
    if value is None:
        return named
    if isinstance(value, float):
        value = f"{value:g}"
    elif isinstance(value, str) and not flags:
        value = repr(value)
    return f"{named} {value}" if flags else f"{named}={value}"


def flag_of(name):
    """The command line's option of the setting ``name``: ``--min-count``."""
    return "--" + name.replace("_", "-")


def refuse_standard_output(uri, named, what, give):
    """``-`` given for an output (``named``: the option or parameter that names it; ``what``: what is written there;
    ``give``: what to give instead). What is written is published whole (atomically, in place of an older one) or is a
    folder of files, never a stream: it went into a file or folder named ``-``. One rule for the CLI's outputs
    (cli.refuse_standard_output) and the Python functions that write (save_bundle, prepare, write_csv, ...)."""
    if isinstance(uri, (str, os.PathLike)) and os.fspath(uri) == "-":
        raise FastTextError(f"{named} -: writing {what} to standard output is not supported; give {give}")


def refuse_standard_input(uri, flag, what, by_name=False):
    """``-`` for a file only ``predict --input`` takes as standard input: ``--autotune-validation -`` said "no such
    file: -", as if a file of that name were missing. Training and evaluate open their files by name (local or S3,
    a names file found beside --train, --train and --validation read as one snapshot) and have never read standard
    input, so the line says that instead. A file named ``-`` in the working directory is still read (as it was).
    ``by_name``: the file may be a pipe (``--pretrained-vectors``, read once: vec_files._read_once_only), so standard
    input is read by its name, /dev/stdin, and the line says to give that. ``flag``: the option or setting that names
    the file (the command line's flags; TrainConfig's ``pretrained_vectors``)."""
    if uri == "-" and not os.path.lexists("-"):
        if by_name:
            raise FastTextError(f"{flag} -: {what} are not read from '-'; to read them from standard input give "
                                f"{flag} /dev/stdin")
        raise FastTextError(f"{flag} -: reading {what} from standard input is not supported; give a file")


def lone_surrogate_message(texts, name):
    """What is wrong with the first of ``texts`` (strs) that UTF-8 cannot encode, else None: ``"texts[1] is not valid
    Unicode text (character '\\udce9' at position 3: a lone surrogate)"``; ``name(i)``: what text ``i`` is called.

    A str holds a lone surrogate (half of a UTF-16 pair: JSON's ``"\\ud800"`` read, or bytes decoded with
    ``surrogateescape`` or ``unicode_escape``) where no text read as UTF-8 can: it failed in featurization as a
    UnicodeEncodeError. predict, training, the endpoint's requests and a bundle's vocabulary say it so."""
    for i, text in enumerate(texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return (f"{name(i)} is not valid Unicode text (character {text[exc.start]!r} at position {exc.start}: a "
                    f"lone surrogate)")
    return None


def printable(text):
    """``text`` as a line on any UTF-8 stream prints it: a lone surrogate in it (JSON's ``"\\ud800"`` in a file
    edited by hand, a file name's byte no UTF-8 decodes, as ``os.fsdecode`` gives it) as its escape, ``\\ud800``.
    Printed as it was, it raised UnicodeEncodeError where stderr is strict UTF-8, as a Jupyter kernel's is."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def is_number(value):
    """A value a numeric setting can take: an int or a float, NumPy's included. Not a bool (``lr=True`` is a
    mistake, not 1.0) and not a string (papermill's ``-r lr 0.1``, a JSON config), which would otherwise
    fail in a comparison as a TypeError naming no setting."""
    import numpy as np

    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def is_bool(value):
    """A value a yes/no setting can take: True or False (NumPy's included). Not a string: ``"no"`` or
    ``"false"`` (papermill's ``-p autotune false``, which papermill passes on as text) is true in Python,
    so it switched the setting on; and not a number (``0``, ``1``), which a typo makes as easily."""
    import numpy as np

    return isinstance(value, (bool, np.bool_))


def check_bool(value, name, hint=""):
    """``value`` unchanged if :func:`is_bool`, else one :class:`FastTextError` naming the setting (``hint``:
    how to give it, appended)."""
    if not is_bool(value):
        raise FastTextError(f"{name} must be True or False, got {value!r}{hint}")
    return value


def check_positive_int(value, name):
    """``value`` unchanged if it is a whole number above 0 (NumPy's included), else one :class:`FastTextError`
    naming the setting: not a bool, a float or a string (papermill's ``-p epochs 1.5`` / ``-r epochs 3``)."""
    import numpy as np

    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
        raise FastTextError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_word_list(value, name, hint="", none_allowed=False):
    """``value`` unchanged if it is a list or tuple of words (each a str; or None, where ``none_allowed``), else one
    :class:`FastTextError` naming it (``hint``: how to give it, appended). A str was read as its letters, each a word:
    notebook 04's query words (papermill's ``-p query_words "[great, bad]"``), or ``vocabulary_words("great", ...)``."""
    if value is None and none_allowed:
        return value
    if not isinstance(value, (list, tuple)) or not all(isinstance(word, str) for word in value):
        raise FastTextError(f"{name} must be a list of words{' or None' if none_allowed else ''}, got {value!r}{hint}")
    return value


def check_word_pair_list(value, name, hint=""):
    """``value`` unchanged if it is a list or tuple of ``(word, word)`` pairs (each a list or tuple of two str), else
    one :class:`FastTextError` naming it (``hint``: appended). One pair given alone was read as pairs of its letters,
    and a pair of three words failed only when its similarity was computed."""
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(w, str) for w in p) for p in value):
        raise FastTextError(f"{name} must be a list of (word, word) pairs, got {value!r}{hint}")
    return value


def did_you_mean(value, choices, most=1, key=None):
    """``" (did you mean 'sgd'?)"``: what a ``value`` that is not among ``choices`` (strs) was likely meant to be, or
    ``""``. The choice itself in other capitals or with ``-`` for ``_`` (``SGD``, ``dist-sync``), else up to ``most``
    close ones (``adan``: ``adam``), else every choice it begins (``yelp``: both Yelp sets). No hint for a value that is
    no text (a list from papermill's ``-y``, a number). ``key``: the part of the value and of each choice compared
    (a dataset's own name, without its folder: ``drug`` for ``exp/drug``); every choice of a key found is offered,
    whole. The one rule of every such hint: a setting's choices (config.check_choice), notebook 01's datasets, those
    prepared (workspace.Workspace.prepared) and the notebooks' parameter names (notebook_params)."""
    return said_as_meant(close_choices(value, choices, most, key))


def close_choices(value, choices, most=1, key=None):
    """What :func:`did_you_mean` offers for ``value`` (its arguments), closest first: ``[(how close, [the choices of
    one key])]``, how close as difflib rates it (1.0: the value itself), so that the choices of two lists compared
    by different keys can be offered together in order (workspace.Workspace.prepared: a folder's names, and those one
    folder deeper by their own)."""
    import difflib

    key = key or (lambda text: text)
    text = key(value.lower().replace("-", "_")) if isinstance(value, str) else ""
    if not text:
        return []
    keyed = {}
    for choice in choices:
        keyed.setdefault(key(choice), []).append(choice)
    close = [text] if text in keyed else (difflib.get_close_matches(text, keyed, most)
                                          or [k for k in keyed if k.startswith(text)])
    # (rated as get_close_matches rates them, the choice first)
    return [(difflib.SequenceMatcher(None, k, text).ratio(), keyed[k]) for k in close]


def said_as_meant(close):
    """``" (did you mean 'drug' or 'drugs'?)"`` of :func:`close_choices`' answer, in its order; ``""`` for none."""
    return f" (did you mean {' or '.join(repr(choice) for _, of_key in close for choice in of_key)}?)" if close else ""


def error_line(message):
    """``error: <message>`` as one line: characters that would break or hide it (a newline in a path the
    user gave, a carriage return) are shown escaped, as ``\\n``."""
    return "error: " + "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(message))


def reason_of(exc):
    """The line of an exception's message that says what is wrong: MXNet's messages start with its C++ stack
    ("Traceback (most recent call last):", which was the whole error line shown) and end with the reason."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if lines[0].startswith("Traceback"):
        return lines[-1].replace("MXNetError: ", "", 1)
    return lines[0]


def bug_reason(exc):
    """A bug's exception as one line: its type and :func:`reason_of` (the job's FailureReason; what a cluster's other
    workers are told, cluster.tell_the_others)."""
    return f"{type(exc).__name__}: {reason_of(exc)}" if str(exc).strip() else type(exc).__name__


def let_mxnet_finish(status=None):
    """Wait for MXNet's engine to run what an aborted run (e.g. a diverged one) left queued: shutting
    the engine down with operators pending can abort the process ("terminate called without an
    active exception", exit -6) after the error line, instead of exiting with 2. (Without MXNet imported: nothing.)

    A worker of a ``dist_*`` cluster exits here, with ``status``: its pushes wait for the other workers, which
    wait for its own, and so would the kvstore's exit barrier (cluster.exit_if_joined)."""
    cluster = sys.modules.get("fasttext_lib.cluster")
    if cluster is not None and status is not None:
        cluster.exit_if_joined(status)
    if "mxnet" in sys.modules:
        try:
            sys.modules["mxnet"].nd.waitall()
        except Exception:  # an operator's own failure: already reported as the error above
            pass


def exit_after_a_bugs_traceback_if_joined():
    """Called while a bug's exception (no user error) is handled: a worker of a ``dist_*`` cluster prints its
    traceback and exits with 1 now. Raised on, the traceback came, then the process waited for ever in the
    kvstore's exit barrier, alive, so the other workers' watch found it answering (cluster.py) and waited for
    FASTTEXT_CLUSTER_TIMEOUT. (Not in a cluster: nothing, and the caller raises on.)"""
    cluster = sys.modules.get("fasttext_lib.cluster")
    if cluster is not None and cluster.joined():
        import traceback

        traceback.print_exc()
        cluster.exit_if_joined(1)


# What MXNet says when an allocation fails: its storage's "Failed to allocate", mshadow's aligned malloc
# (ENOMEM, 12: a random-number generator's state under ``ulimit -v``), C++'s std::bad_alloc, and a GPU's memory
# (src/storage/pooled_storage_manager.h: "cudaMalloc retry failed: " or "cudaMalloc failed: " and
# cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory").
_MXNET_OUT_OF_MEMORY = ("Failed to allocate", "AlignedMallocPitch failed", "bad_alloc", "cudaMalloc retry failed: out of memory",
                        "cudaMalloc failed: out of memory")


def is_out_of_memory(exc):
    """Whether ``exc`` is an allocation that failed: Python's and numpy's ``MemoryError`` (the native featurizer
    raises it too), MXNet's (an ``MXNetError``, raised where the allocation happened or at the next wait for the
    engine), or a thread that could not be started (its stack is memory too: ``ulimit -v``). A user's settings or
    data cause it, not a bug."""
    if type(exc).__name__ == "MXNetError":
        return any(said in str(exc) for said in _MXNET_OUT_OF_MEMORY)
    return isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and str(exc) == "can't start new thread")


def out_of_memory_line(exc):
    """The message for :func:`is_out_of_memory`'s errors, without MXNet's traceback (its last line is the cause)."""
    cause = _allocation_failed(exc)
    if cause == "can't start new thread":  # (memory for its stack, or a limit on threads: a container's pids.max)
        return ("out of memory or threads (can't start new thread); use a machine with more memory, fewer threads "
                "(OMP_NUM_THREADS), or raise the process's thread limit")
    return f"out of memory ({cause}); use a machine with more memory, or less data or smaller settings"


def out_of_memory_to(what, exc):
    """The :class:`FastTextError` of :func:`is_out_of_memory`'s ``exc`` raised while doing ``what`` ("load the bundle
    X", "read X"): where it failed, named (a bundle's or checkpoint's files copied under a tight ``ulimit -v``
    raised a bare ``MemoryError``, which named neither), its cause, and what to do."""
    return FastTextError(f"out of memory to {what} ({_allocation_failed(exc)}); use a machine with more memory, or "
                         f"raise this process's limit (ulimit -v) if it has one")


@contextlib.contextmanager
def out_of_memory_naming(what):
    """Memory the block cannot have (:func:`is_out_of_memory`: Python's MemoryError or MXNet's failed allocation) as
    :func:`out_of_memory_to`'s one line saying ``what`` was being done ("load the bundle X", "read X"), not a bare
    MemoryError or MXNet's traceback naming neither the bundle nor the checkpoint nor what to do."""
    try:
        yield
    except Exception as exc:
        if not is_out_of_memory(exc):
            raise
        raise out_of_memory_to(what, exc) from None


def _allocation_failed(exc):
    """What an allocation that failed said: MXNet's last line, or Python's message (a bare MemoryError has none)."""
    cause = str(exc).strip().splitlines()[-1:] or ["an allocation failed"]
    return cause[0].replace("MXNetError: ", "")


def could_not_remove(left, rerun):
    """``left``'s files, (file, why) each, named with what to do: a stop's line claimed they were cleaned up, and a failed
    write's line (storage.atomic) read as if nothing had changed. ``rerun``: how the write's user does it again so that
    it replaces them, in their own terms (storage.s3.rerun_to_replace: the command line's flag, or the Python API's
    argument)."""
    whys = {why for _, why in left}
    one_why = len(whys) == 1
    files = ", ".join(file if one_why else f"{file} ({why})" for file, why in left)
    return (f"{files} this run created could not be removed{f' ({whys.pop()})' if one_why else ''}: delete "
            f"{'it' if len(left) == 1 else 'them'}, or {rerun}")
