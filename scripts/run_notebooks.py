"""`make demo`: run the notebook series 01..04 with papermill against a local S3 server.

The notebooks never create buckets (on SageMaker they use real S3); here scripts/local_s3.py
starts moto's S3 server on 127.0.0.1 and creates the default bucket ``fasttext-demo``. Each
notebook runs with its default parameters plus any ``-p name value`` given here (applied to every
notebook that has that parameter, but not to one that would leave it unused while another uses it, such as 01's seed
with the sample or 02's role without use_training_job when 04 deploys: notebook_overrides; a value no notebook would
use is refused), in the notebooks/ folder as Jupyter would run it. Executed
notebooks go to build/demo/; figures to the notebooks' ``output_dir`` (build/demo/ by default), and 02's
history and 04's files to its run's folder there (``{output_dir}/{run_name}/``: build/demo/sample/ by default). ``--in-place`` (``make notebooks``) writes them back into notebooks/ with the run
metadata stripped (clean_notebooks.py): the committed outputs nbval compares.
"""
import argparse
import ast
import contextlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clean_notebooks import clean_file  # noqa: E402
from local_s3 import ROOT, ServerError, local_s3  # noqa: E402

SERIES = ["01_data_prep.ipynb", "02_train_gpu.ipynb", "03_cpu_vs_gpu.ipynb", "04_inference.ipynb"]

# The kernel's own log at CRITICAL: ipykernel 7 warned "Kernel is running over TCP without encryption ..." on stderr
# for every notebook, four paragraphs of the demo's output about a kernel that listens on 127.0.0.1 only; and at a
# Ctrl-C, where papermill shuts the kernel down as the interrupted cell ends, it logged that cell's answer, sent to a
# socket already closed, as an ERROR with its traceback. A cell's own output (warnings, errors) is the notebook's,
# not this log's.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL"]


def execute(source, executed, params, cwd):
    """Run notebook ``source`` with papermill into ``executed``, its kernel in ``cwd`` (as Jupyter would run it)."""
    import papermill
    papermill.execute_notebook(source, executed, parameters=params, kernel_name="python3", cwd=cwd,
                               progress_bar=False, extra_arguments=KERNEL_ARGUMENTS)


@contextlib.contextmanager
def working_directory(path):
    """``path`` as the working directory for the block (contextlib.chdir is Python 3.11's)."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def check_series(notebooks, overrides, known):
    """Each notebook's check cell (its second code cell), run here on its parameters cell and the overrides it would
    get, before any notebook runs; a refusal is one line naming the notebook, else None. Left to its own notebook, a
    value only a later one takes (``-p epochs 0``, ``-p top_k 0``) was refused after the notebooks before it had run in
    full (01's splits uploaded and figure written; 02's minutes of training). The cells run in the notebooks' folder,
    as their kernels do (a relative ``output_dir`` or ``train_file``); outside a kernel they check only the values."""
    import nbformat

    from fasttext_lib.errors import FastTextError, error_line

    for name in SERIES:
        cells = [c.source for c in nbformat.read(os.path.join(notebooks, name), as_version=4).cells
                 if c.cell_type == "code"]
        namespace = {}
        try:
            with working_directory(notebooks):
                exec(cells[0], namespace)  # noqa: S102 - the committed parameters cell
                given = notebook_overrides(name, overrides, known)
                namespace.update(given)  # (papermill's values)
                # and the kernel's history as papermill leaves it, its injected cell included: the check cell tells
                # from it what was given (-p autotune_duration 30 without autotune: notebook_params.check_parameters)
                namespace["In"] = ["", cells[0], "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in given.items())]
                exec(cells[1], namespace)  # noqa: S102 - the committed check cell
        except FastTextError as exc:
            return error_line(f"{name}: {exc}")
    return None


def notebook_overrides(name, overrides, known):
    """The overrides notebook ``name`` is run with: those of its parameters, less one it would leave unused that
    another notebook of the series would use (notebook_params.left_unused). ``-p seed 5`` seeds 02's and 03's training,
    and 01 uses a seed only for the synthetic corpus or your own data's held-out split; ``-p deploy True -p role ARN``
    gives 04's endpoint its role, which 02 uses only with use_training_job=True. Their check cells refuse such a value,
    which stopped the demo before anything ran. One no notebook would use is left in, for the check cell to refuse:
    a value the demo would ignore is the user's mistake (``-p role ARN`` alone deploys nothing)."""
    from fasttext_lib.notebook_params import left_unused

    given, namespace = _run_parameters(name, overrides, known)
    return {k: v for k, v in given.items()
            if not (left_unused(k, namespace) and any(_would_use(n, k, overrides, known) for n in SERIES if n != name))}


def _run_parameters(name, overrides, known):
    """``(given, namespace)``: the overrides notebook ``name`` has, and all its parameters as its run would have them
    (its defaults, papermill's reading of its parameters cell, under those overrides)."""
    given = {k: v for k, v in overrides.items() if k in known[name]}
    return given, {**{k: _default(p) for k, p in known[name].items()}, **given}


def _would_use(name, parameter, overrides, known):
    """Whether notebook ``name``, run with ``overrides``, has ``parameter`` and would use it."""
    from fasttext_lib.notebook_params import left_unused

    return parameter in known[name] and not left_unused(parameter, _run_parameters(name, overrides, known)[1])


def shown(path):
    """``path`` as the summary names it: from the repository where it is inside it (build/demo/), else as it is
    (``-p output_dir /tmp/out`` was named ../../../tmp/out, a climb to count back)."""
    relative = os.path.relpath(path, ROOT)
    return path if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def parse_overrides(pairs):
    overrides = {}
    for name, value in pairs:
        try:
            overrides[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            overrides[name] = value  # a plain string such as sgd
    return overrides


def _default(parameter):
    """A parameter's default as papermill.inspect_notebook reports it (Python source), or None."""
    try:
        return ast.literal_eval(parameter["default"])
    except (ValueError, SyntaxError):
        return None


def main(argv=None):
    """The demo (:func:`run_demo`), its Ctrl-C one line and 130 (the shell's status for it) wherever it lands."""
    try:
        return run_demo(argv)
    except KeyboardInterrupt:  # (before the notebooks or after them: the local server, the check cells, the summary)
        print("error: make demo stopped by the user", file=sys.stderr)
        return 130


def run_demo(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="override a notebook parameter (Python literal or plain string)")
    parser.add_argument("--in-place", action="store_true", help="write executed notebooks back into notebooks/")
    args = parser.parse_args(argv)
    overrides = parse_overrides(args.p)

    import pandas as pd
    import papermill

    from fasttext_lib.errors import FastTextError, error_line
    from fasttext_lib.storage import expand_home, is_bucket_name
    from fasttext_lib.notebook_params import bundle_name, check_flags, name_hints

    if args.in_place and overrides:
        parser.error("--in-place writes the committed notebooks: run them with their own parameters")
    notebooks = os.path.join(ROOT, "notebooks")
    # A name no notebook has (-p epoch 3) was dropped silently and the demo ran with the defaults.
    known = {name: papermill.inspect_notebook(os.path.join(notebooks, name)) for name in SERIES}
    unknown = sorted(set(overrides) - set().union(*known.values()))
    if unknown:
        every = sorted(set().union(*known.values()))
        print(f"error: no notebook of the series has the parameter {name_hints(unknown, every)}; they have: "
              f"{', '.join(every)}", file=sys.stderr)
        return 2
    # A yes/no parameter given as text (-p autotune false) was refused only by its own notebook's check cell,
    # after the notebooks before it had run, in a traceback of this script: now before anything runs, in one line.
    flags = {name: value for name, value in overrides.items()
             if any(name in params and isinstance(_default(params[name]), bool) for params in known.values())}
    try:
        check_flags(**flags)
    except FastTextError as exc:
        print(error_line(exc), file=sys.stderr)
        return 2
    bucket = overrides.get("bucket", "fasttext-demo")
    if isinstance(bucket, int) and not isinstance(bucket, bool):  # -p bucket 123: a name of digits, read as a number
        bucket = str(bucket)
    if not is_bucket_name(bucket):  # the demo creates it on the local server: else botocore's traceback
        print(f"error: bucket must be an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens, no "
              f"s3://), got {bucket!r}", file=sys.stderr)
        return 2
    executed = notebooks if args.in_place else os.path.join(ROOT, "build", "demo")
    os.makedirs(executed, exist_ok=True)
    with contextlib.ExitStack() as server:
        try:
            server.enter_context(local_s3(bucket))
        except ServerError as exc:  # e.g. no 127.0.0.1 to bind: a traceback before, and earlier a hang
            print(f"error: {exc}", file=sys.stderr)
            return 2
        refused = check_series(notebooks, overrides, known)
        if refused:
            print(refused, file=sys.stderr)
            return 2
        for name in SERIES:
            source = os.path.join(notebooks, name)
            params = notebook_overrides(name, overrides, known)
            print(f"running {name} {params or ''}", flush=True)
            try:
                execute(source, os.path.join(executed, name), params, notebooks)
            except KeyboardInterrupt:
                # papermill's client interrupts the kernel (its cell stops as the Stop button stops it: 02's training
                # saves nothing), shuts it down and saves the executed notebook as far as it got, then goes on with
                # the KeyboardInterrupt: its traceback and papermill's said no more than this
                print(f"error: {name} stopped by the user (its output until then: "
                      f"{os.path.relpath(os.path.join(executed, name), ROOT)})", file=sys.stderr)
                return 130
            except papermill.PapermillExecutionError as exc:
                # A cell that stopped (a user's error its notebook names in one line, e.g. a missing S3 object after
                # the check cell) ended the demo in this script's and papermill's tracebacks: one line, and where
                # the executed notebook, with the cell's own output, is
                said = exc.evalue if exc.ename == "FastTextError" else f"{exc.ename}: {exc.evalue}"
                print(f"error: {name} stopped in cell [{exc.exec_count}]: {said} (its output: "
                      f"{os.path.relpath(os.path.join(executed, name), ROOT)})", file=sys.stderr)
                return 2
            if args.in_place:
                clean_file(os.path.join(executed, name))
            if name.startswith("02"):
                defaults = {k: ast.literal_eval(v["default"]) for k, v in known[name].items()}
    settings = {**defaults, **{k: v for k, v in overrides.items() if k in defaults}}
    # as the notebooks' Workspace reads it: relative to notebooks/, ~ the home folder (storage.expand_home)
    out = os.path.normpath(os.path.join(ROOT, "notebooks", expand_home(str(settings["output_dir"]))))
    # 02's run folder: run_name, else the dataset's name (as the notebook names it)
    history_csv = os.path.join(out, bundle_name(settings["run_name"], settings["dataset"]), "history.csv")
    history = pd.read_csv(history_csv, index_col="epoch")
    # an autotuned model's history is its trial's, scored on the search's split (02 and 04 give its test accuracy);
    # the table names the split it holds (test_, or validation_: TrainedModel.history_frame)
    scored_on = ("autotune's validation split, 20% of the training split" if settings.get("autotune") is True
                 else "the test split")
    print(f"\naccuracy per epoch (held out: {scored_on}):")
    print(history[[c for c in history if c.endswith(("_loss", "_accuracy"))]].round(4).to_string())
    print(f"\nexecuted notebooks: {shown(executed)}/")
    print(f"figures and tables: {shown(out)}/ (02's history: {shown(history_csv)})")
    print("S3 objects (data, model bundle) lived on the local server and are gone with it.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
