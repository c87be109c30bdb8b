"""Where the memory of a whole ``python -m fasttext_lib train`` run goes, phase by phase.

Runs the CLI's ``train`` command in this process (same arguments) and, at each phase boundary,
reports the resident set (VmRSS) and the phase's own peak: the high-water mark VmHWM is reset at
the start of every phase (``echo 5 > /proc/self/clear_refs``, Linux), so each row's peak is the
most that phase held at once. Phases are found by wrapping the library's own functions (reading,
counting, the vocabulary, the table, each epoch, the bundle); nothing in the library changes.

Usage (from the repository root):
    OMP_NUM_THREADS=2 python benchmarks/trace_memory.py train --train .../train.csv --output /tmp/m \
        --epochs 5 --ngrams 2 --no-progress
"""
import functools
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

_rows = []
_state = {"phase": "start-up (python, imports)", "since": time.time()}


def _status():
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) // 1024
    return values["VmRSS"], values["VmHWM"]


def _detail():
    """Where the resident memory sits (TRACE_MEMORY_DETAIL=1): /proc/self/smaps' Rss summed by kind of
    mapping, and glibc's view of its heap (mallinfo2, all arenas: in use / free but kept)."""
    kinds = {}
    kind = None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not line.startswith(("Rss", "Size")):
                name = head[5] if len(head) > 5 else ""
                kind = ("[heap]" if name == "[heap]" else "stack" if name.startswith("[stack") else
                        "anon" if not name else "file" if not name.startswith("[") else name)
            elif head[0] == "Rss:":
                kinds[kind] = kinds.get(kind, 0) + int(head[1])
    text = ", ".join(f"{k} {v // 1024}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]) if v >= 1024)
    try:
        import ctypes

        class Mallinfo2(ctypes.Structure):
            _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                       "fsmblks", "uordblks", "fordblks", "keepcost")]
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = Mallinfo2
        info = libc.mallinfo2()
        text += (f" | malloc: heap {info.arena >> 20} (in use {info.uordblks >> 20}, free {info.fordblks >> 20}),"
                 f" mmapped {info.hblkhd >> 20}")
    except (OSError, AttributeError):
        pass
    return text


def mark(next_phase):
    """End the current phase (record its peak and where RSS stands) and start ``next_phase``."""
    rss, hwm = _status()
    now = time.time()
    _rows.append((_state["phase"], now - _state["since"], rss, hwm))
    if os.environ.get("TRACE_MEMORY_LIVE"):  # each phase as it ends (long runs)
        print(f"[trace] {_state['phase']}: {now - _state['since']:.1f} s, RSS {rss:,} MiB, peak {hwm:,} MiB",
              file=sys.stderr, flush=True)
    if os.environ.get("TRACE_MEMORY_DETAIL"):
        print(f"[trace]   resident MiB by mapping: {_detail()}", file=sys.stderr, flush=True)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current RSS
    _state["phase"], _state["since"] = next_phase, now


def phase(name, after=None):
    """Wrap a function so that its call is the phase ``name`` (``after``: the phase that follows)."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            mark(name)
            try:
                return fn(*args, **kwargs)
            finally:
                mark(after or f"after {name}")
        return inner
    return wrap


def install():
    import fasttext_lib.bundle as bundle
    import fasttext_lib.data as data
    import fasttext_lib.features as features
    import fasttext_lib.model as model
    import fasttext_lib.train as train

    data.read_labeled = phase("read the file -> label and text str", "import mxnet, encode labels")(data.read_labeled)
    features.count_tokens = phase("read + tokenize + count -> packed ids", "labels, checks")(features.count_tokens)
    train.featurize = phase("featurize: vocabulary, id map", "settings, release texts, model")(train.featurize)
    cls = model.FastTextClassifier
    cls.initialize_like_fasttext = phase("table alloc + init", "epoch 1 (updater, batch maker, steps)")(cls.initialize_like_fasttext)
    bundle.save_bundle = phase("save bundle", "exit")(bundle.save_bundle)
    original_train = train.train

    @functools.wraps(original_train)
    def traced_train(*args, on_epoch_end=None, **kwargs):
        epoch = [1]

        def hook(row):
            mark(f"epoch {epoch[0]} done (report)")
            epoch[0] += 1
            if on_epoch_end:
                on_epoch_end(row)
            mark(f"epoch {epoch[0]}, or train() returning")
        return original_train(*args, on_epoch_end=hook, **kwargs)

    train.train = traced_train
    import fasttext_lib.cli  # noqa: F401  (cmd_train imports train/save_bundle at call time)


def report():
    print(f"{'phase':<40} {'seconds':>8} {'RSS after MiB':>14} {'peak in phase MiB':>18}", file=sys.stderr)
    for name, seconds, rss, hwm in _rows:
        print(f"{name:<40} {seconds:8.1f} {rss:14,} {hwm:18,}", file=sys.stderr)
    print(f"{'whole run peak':<40} {'':8} {'':14} {max(r[3] for r in _rows):18,}", file=sys.stderr)


def main():
    from fasttext_lib.lean_import import import_mxnet_lean

    import_mxnet_lean()  # as the CLI's own process does (install() imports model.py, and mxnet)
    install()
    mark("cli: parse, check output")
    from fasttext_lib.cli import main as cli_main
    try:
        code = cli_main(sys.argv[1:], lean_mxnet=True)
    finally:
        mark("end")
        report()
    return code


if __name__ == "__main__":
    sys.exit(main())
