"""Every MXNet operator the GPU route calls, recorded from a real run of that route on the CPU.

The GPU route is the generic one: no native bag operators (``FASTTEXT_LIB_BAG_OPS=0``), MXNet's
scorer instead of the numpy one, and a kvstore ``device`` for several devices. Besides those two
switches the only device-dependent step is copying each batch to its device (``_copyto``), so running
it on CPU contexts with them forced calls the same operators, with the same storage types, as on
``gpu`` / ``gpu:0,1`` (docs/GPU.md cites each one's GPU registration in MXNet 1.9.1's source).

Two sources, both from the running process:

* every operator called from Python (``_imperative_invoke``): name, where in our code (the
  innermost fasttext_lib function on the stack), input and output storage types, calls per step;
* MXNet's profiler (aggregate stats) for the operators the engine runs by itself: autograd's
  backward operators and the kvstore's reductions, copies and retains.

Storage fallbacks (an operator without a kernel for its inputs' storage types computes on dense
copies) are logged by MXNet on stderr with ``MXNET_STORAGE_FALLBACK_LOG_VERBOSE=1``, set here: any
"fallback detected" line there is a fallback of the route (tests/test_gpu_route.py checks for none).

Usage: PYTHONPATH=. python benchmarks/list_gpu_ops.py [--markdown]
"""
import argparse
import collections
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "1"
os.environ["FASTTEXT_LIB_BAG_OPS"] = "0"  # the GPU route: MXNet's generic operators

# the engine's own bookkeeping, not operators: variable deletion, waits, random seeding
ENGINE_BOOKKEEPING = ("DeleteVariable", "WaitForVar", "Resource")


def op_names():
    """Operator handle -> name, for every registered operator."""
    import ctypes

    from mxnet.base import _LIB, OpHandle, check_call, py_str

    size, names = ctypes.c_uint(), ctypes.POINTER(ctypes.c_char_p)()
    check_call(_LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(names)))
    out = {}
    for name in [names[i] for i in range(size.value)]:  # copied: the next calls reuse the C buffer
        handle = OpHandle()
        check_call(_LIB.NNGetOpHandle(name, ctypes.byref(handle)))
        if handle.value not in out:  # aliases share the handle: ask for the registered name
            real, desc, num = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_uint()
            arg_names, arg_types, arg_descs = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
            ret = ctypes.c_char_p()
            check_call(_LIB.NNGetOpInfo(handle, ctypes.byref(real), ctypes.byref(desc), ctypes.byref(num),
                                        ctypes.byref(arg_names), ctypes.byref(arg_types), ctypes.byref(arg_descs),
                                        ctypes.byref(ret)))
            out[handle.value] = py_str(real.value)
    return out


def where_in_our_code():
    """The innermost fasttext_lib function on the stack (module.function)."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if os.sep + "fasttext_lib" + os.sep in path:
            return f"{os.path.basename(path)[:-3]}.{frame.f_code.co_name}"
        frame = frame.f_back
    return "(this script)"


class Recorder:
    """Wraps ``_imperative_invoke``: counts (run, phase, op, where, input stypes, output stypes, attrs)."""

    def __init__(self):
        from mxnet.ndarray import register

        self.names = op_names()
        self.calls = collections.Counter()
        self.run, self.phase = None, "setup"
        self._register = register
        self._original = register._imperative_invoke

        def invoke(handle, ndargs, keys, vals, out, *rest):
            result = self._original(handle, ndargs, keys, vals, out, *rest)
            outs = result if isinstance(result, (list, tuple)) else [result]
            attrs = dict(zip(keys, vals))
            note = ",".join(f"{k}={attrs[k]}" for k in ("lazy_update", "transpose_a", "transpose_b", "act_type",
                                                          "sparse_grad", "stype") if k in attrs)
            key = (self.run, self.phase, self.names.get(handle, handle), where_in_our_code(),
                   "+".join(a.stype for a in ndargs) or "-", "+".join(o.stype for o in outs), note)
            self.calls[key] += 1
            return result

        register._imperative_invoke = invoke

    def close(self):
        self._register._imperative_invoke = self._original


def engine_ops(run, profile_file):
    """``{operator: calls}`` the engine ran during ``run()`` (MXNet's profiler, aggregate stats).

    ``profile_file``: where the profiler may write its trace (it does so in the background).
    """
    import mxnet as mx

    mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename=profile_file)
    mx.profiler.set_state("run")
    run()
    mx.nd.waitall()
    mx.profiler.set_state("stop")
    stats = json.loads(mx.profiler.dumps(reset=True, format="json"))
    out = collections.Counter()
    for domain, ops in stats.get("Time", {}).items():
        for name, row in ops.items():
            out[(domain, name)] += row["Count"]
    return out


def run_route(ctx, optimizer, classes, epochs, docs, checkpoint_dir):
    """Train on the GPU route with ``ctx`` (CPU contexts standing in for GPUs), then score."""
    from fasttext_lib import train as train_module
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.synthetic import generate_reviews

    data = generate_reviews(docs + 200, num_classes=classes, seed=5)
    splits = (LabeledTexts(data.labels[:docs], data.texts[:docs]), LabeledTexts(data.labels[docs:], data.texts[docs:]))
    config = TrainConfig(epochs=epochs, optimizer=optimizer, lr=0.5 if optimizer == "sgd" else 0.01, batch_size=256,
                         ngrams=2, buckets=20000, ctx=ctx, progress=False)
    trained = train_module.train(*splits, config, checkpoint_dir=checkpoint_dir)
    return trained, trained.featurizer.transform(splits[1].texts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2048, help="training documents (8 steps of 256 per epoch)")
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument("--json", help="also write the operator names and rows here (tests/test_gpu_route.py)")
    args = parser.parse_args(argv)

    from fasttext_lib import bag_ops, optim, scoring, train as train_module
    from fasttext_lib.model import FastTextClassifier

    assert not bag_ops.available(), "the generic route must be forced (FASTTEXT_LIB_BAG_OPS=0)"
    recorder = Recorder()
    steps = collections.Counter()

    # Phases: what train() does once (setup), per step, per epoch (sync, loss, scoring), per checkpoint.
    def phased(owner, name, phase):
        original = getattr(owner, name)

        def wrapper(*a, **k):
            before, recorder.phase = recorder.phase, phase
            try:
                return original(*a, **k)
            finally:
                recorder.phase = before
        setattr(owner, name, wrapper)

    original_apply = optim.Updater.apply

    def counting_apply(self, *a, **k):
        steps[recorder.run] += 1
        return original_apply(self, *a, **k)
    optim.Updater.apply = counting_apply
    phased(train_module, "to_batch_arrays", "step")
    phased(optim.Updater, "embedding_for", "step")
    phased(train_module, "sparse_step", "step")
    phased(optim.Updater, "apply", "step")
    phased(optim.Updater, "sync_tables", "epoch end")
    phased(train_module, "probabilities", "epoch end (scoring)")  # (the validation split, and score_train's)
    phased(optim.Updater, "parameters_finite", "epoch end")
    phased(train_module, "save_checkpoint", "checkpoint")
    phased(FastTextClassifier, "initialize_like_fasttext", "setup")
    original_init = optim.Updater.__init__

    def init_then_loop(self, *a, **k):
        recorder.phase = "setup"
        original_init(self, *a, **k)
        recorder.phase = "step"  # the epoch loop follows: train()'s own ops (the loss sum) are per step
    optim.Updater.__init__ = init_then_loop

    # The MXNet scorer (GPU serving and validation): CpuScorer only serves CPU contexts.
    scoring.CpuScorer.usable = staticmethod(lambda ctx: False)

    # gpu -> cpu, gpu:0,1 -> cpu:0,1 (kvstore device); two classes: sigmoid loss, more: softmax
    runs = [("cpu", "sgd", 2), ("cpu", "adam", 2), ("cpu:0,1", "sgd", 2), ("cpu:0,1", "adam", 2), ("cpu", "sgd", 4)]
    run_names = [f"{c} {o} {k}cls" for c, o, k in runs]
    engine = {}
    scratch = tempfile.mkdtemp(prefix="list_gpu_ops_")  # removed at the end (the profiler writes late)
    for (ctx, optimizer, classes), name in zip(runs, run_names):
        recorder.run = name
        recorder.phase = "setup"

        def run():
            with tempfile.TemporaryDirectory() as tmp:
                trained, bags = run_route(ctx, optimizer, classes, 2, args.docs, os.path.join(tmp, "ckpt"))
                recorder.phase = "predict (MXNet scorer)"
                scoring.predict_bags(trained.model, trained.featurizer, bags, trained.ctx[0])
                recorder.phase = "setup"
        engine[recorder.run] = engine_ops(run, os.path.join(scratch, "profile.json"))
    recorder.close()
    shutil.rmtree(scratch, ignore_errors=True)

    rows = collections.defaultdict(dict)
    for key, count in recorder.calls.items():
        run, phase, op, where, ins, outs, note = key
        per = f"{count / steps[run]:.3g}/step" if phase == "step" else str(count)  # other phases: calls per run
        rows[(phase, op, where, ins, outs, note)][run] = per
    order = {"setup": 0, "step": 1, "epoch end": 2, "epoch end (scoring)": 3, "checkpoint": 4, "predict (MXNet scorer)": 5}
    print("# operators called from Python (generic route), calls per run or per step")
    header = ["phase", "operator", "where", "inputs", "outputs", "attrs"] + run_names
    if args.markdown:
        print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for key in sorted(rows, key=lambda k: (order.get(k[0], 9), k[2], k[1])):
        cells = list(key) + [rows[key].get(r, "") for r in run_names]
        print("| " + " | ".join(cells) + " |" if args.markdown else "\t".join(cells))
    print("\n# operators the engine ran (MXNet profiler; includes autograd backward and kvstore internals), calls")
    names = sorted({k for e in engine.values() for k in e})
    if args.markdown:
        print("| domain | name | " + " | ".join(run_names) + " |\n|" + "---|" * (2 + len(run_names)))
    for domain, name in names:
        cells = [domain, name] + [str(engine[r].get((domain, name), "")) for r in run_names]
        print("| " + " | ".join(cells) + " |" if args.markdown else "\t".join(cells))
    print("\nsteps per run: " + ", ".join(f"{r}: {steps[r]}" for r in run_names))
    if args.json:
        engine_names = sorted({name for e in engine.values() for (domain, name) in e
                               if domain == "operator" and not name.startswith(ENGINE_BOOKKEEPING)})
        with open(args.json, "w") as f:
            json.dump({"python_ops": sorted({k[1] for k in rows}), "engine_ops": engine_names,
                       "rows": [list(k) + [rows[k].get(r, "") for r in run_names] for k in rows],
                       "runs": run_names, "steps": {r: steps[r] for r in run_names}}, f, indent=1)


if __name__ == "__main__":
    main()
