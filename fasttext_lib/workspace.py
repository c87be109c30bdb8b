"""Where one run's files live: its S3 prefix (data, models) and a local folder (figures, tables).

The notebooks, the CLI examples and the SageMaker helpers all use one layout under
``s3://{bucket}/{prefix}/``: ``data/`` for the prepared ``.train``/``.test`` files and ``models/``
for bundles (sagemaker_utils.py adds ``code/``, ``jobs/``, ``checkpoints/``, ``serving/``). Figures
and tables go to a local ``output_dir``, notebook 02's of each run in its own folder, ``{output_dir}/{run_name}/``
(:meth:`Workspace.run_folder`: a second run, of another name, replaced the first one's history); a relative one is taken from the working directory, which
Jupyter, ``make demo`` and nbval all set to the notebook's folder (papermill's command line keeps the
shell's unless given ``--cwd``).

The notebooks' parameter checks live here too: :func:`check_parameters` (a name papermill injected that
the notebook does not have), :func:`check_flags` (yes/no parameters), :func:`check_dataset` (01's datasets) and
:func:`check_query_words` / :func:`check_word_pairs` (04's word lists);
and what ties 04 to the data 02 trained on: :func:`data_record` and :func:`check_tested_on`.
"""
import ast
import difflib
import hashlib
import os
import sys
from pathlib import Path

from . import storage
from .errors import FastTextError, check_bool, keeping_stops, note_stop_line
from .notebook_errors import _kernel_shell, show_errors_as_lines

# The first line of the cell papermill injects after the parameters cell (tagged injected-parameters).
PAPERMILL_HEADER = "# Parameters"
# Notebook 02's autotune outputs in the run's local folder: the trial plot and table.
AUTOTUNE_PLOT, AUTOTUNE_TABLE = "autotune.png", "autotune_trials.csv"
# Notebook 02's history of the model it saves, in the run's local folder: the plot of each epoch's scores and the table.
HISTORY_PLOT, HISTORY_TABLE = "history.png", "history.csv"
# What the figures this module writes say in their PNG "Software" text, so that it knows its own.
FIGURE_MARK = "fasttext_lib"


class Workspace:
    """``Workspace(bucket, prefix, output_dir)``: ``.data`` and ``.models`` (``s3://`` prefixes),
    ``.out`` (a local folder, created) and ``.show(name)`` (a path to print: relative, as given)."""

    def __init__(self, bucket, prefix, output_dir):
        # a list or dict (papermill -y) reached boto, whose refusal quoted two regular expressions; an int is a name
        if isinstance(bucket, bool) or not isinstance(bucket, (str, int)) or not str(bucket) or "/" in str(bucket):
            raise FastTextError(f"bucket must be a bucket name (no s3://, no /), got {bucket!r}")
        if not isinstance(output_dir, (str, os.PathLike)) or not str(output_dir).strip():
            # papermill -p output_dir None passes None: a TypeError traceback from pathlib; "" was the notebooks' folder
            raise FastTextError(f"output_dir must be a folder's path, got {output_dir!r}")
        # "/" is no prefix (it made keys beginning with a slash)
        self.base = storage.prefix_uri(bucket, key_path(prefix, "prefix", empty_ok=True))
        self.data = f"{self.base}/data"
        self.models = f"{self.base}/models"
        self._shown = Path(output_dir)
        # ~ as the shell would read it: "~/SageMaker/out" made a folder named ~ beside the notebooks, while the
        # printed paths (as given) pointed into the home folder
        self.out = self._shown.expanduser().resolve()
        self._make_output_dir()

    def _make_output_dir(self):
        """``out``, created, in which files can be written: a file of that name, a folder under a file, a read-only
        disk or /proc was an OSError traceback here, or (a folder that exists, read-only) in the first cell that
        saved a figure, after the work."""
        try:
            storage.check_writable(str(self.out), what=str(self._shown))
            self.out.mkdir(parents=True, exist_ok=True)
        except FastTextError as exc:
            raise FastTextError(f"output_dir {str(self._shown)!r} cannot hold the figures and tables: {exc}") from None
        except OSError as exc:
            raise FastTextError(f"output_dir {str(self._shown)!r} cannot hold the figures and tables: cannot create "
                                f"{self.out}: {exc.strerror or exc}") from None

    def show(self, name):
        """``output_dir/name`` as the user wrote ``output_dir``: printed output stays machine-independent."""
        return str(self._shown / name)

    def model(self, run_name):
        """The bundle ``models/{run_name}``: ``run_name`` may hold folders (``exp/1``), no empty, ``.`` or ``..`` part."""
        return f"{self.models}/{key_path(run_name, 'run_name')}"

    def prepared(self, dataset, split):
        """Notebook 01's ``{dataset}.{split}`` under ``data/``, or one error saying to run 01 first: 02, 03 and 04 run
        before it (or with another dataset, bucket or prefix) said only "no such S3 object", as if data were lost."""
        uri = f"{self.data}/{key_path(dataset, 'dataset')}.{split}"
        if not storage.exists(uri, forbidden_is_missing=True):
            try:  # a name 01 refuses (-p dataset Sample) was told to run 01 with it
                check_dataset(dataset)
            except FastTextError as exc:
                raise FastTextError(f"no prepared {split} data for dataset {dataset!r} at {uri}: {exc}") from None
            raise FastTextError(f"no prepared {split} data for dataset {dataset!r} at {uri}: run notebook 01 with "
                                f"dataset={dataset!r} and this bucket and prefix first")
        return uri

    def saved_model(self, run_name):
        """The bundle :meth:`model` names, or one error saying to run notebook 02 first (its ``config.json`` is the
        bundle's manifest, written last: bundle.py)."""
        uri = self.model(run_name)
        if not storage.exists(f"{uri}/config.json", forbidden_is_missing=True):
            raise FastTextError(f"no model bundle at {uri}: run notebook 02 with run_name={run_name!r} and this bucket "
                                f"and prefix first")
        return uri

    def run_folder(self, run_name):
        """The local folder of notebook 02's run ``run_name`` (its history and autotune files), ``out/{run_name}``
        (``exp/1``: a folder in a folder), not created: one error now if it cannot be (a file of that name is in the
        way, a read-only folder), which the check cell finds before the training. In one folder for every run, a
        run of another name replaced the history of the one before (each bundle's metrics.json kept its own)."""
        folder = self.out / key_path(run_name, "run_name")
        try:
            storage.check_writable(str(folder), what=self.show(key_path(run_name, "run_name")))
        except FastTextError as exc:
            raise FastTextError(f"run_name {run_name!r} cannot be a folder of output_dir for its history: {exc}") from None
        return folder

    def save_autotune(self, trials, fig, run_name, dpi=100):
        """Notebook 02's search outputs in :meth:`run_folder`: ``autotune.png`` (``fig``, marked as ours) and
        ``autotune_trials.csv`` (``trials``), both written in full before either replaces an older one. Returns
        their paths."""
        folder = self.run_folder(run_name)
        paths = [str(folder / AUTOTUNE_PLOT), str(folder / AUTOTUNE_TABLE)]
        with storage.atomic_writes(paths) as (plot, table):
            fig.savefig(plot, format="png", dpi=dpi, metadata={"Software": FIGURE_MARK})
            table.write(trials.to_csv(index=False).encode("utf-8"))
        return paths

    @keeping_stops  # the Stop button: one line anywhere in the cell (errors.kept_stops, notebook_errors), not a traceback
    def autotune(self, train_data, test_data, base, run_name, duration, seed=0):
        """Notebook 02's autotune cell: the search (autotune.autotune, ``refit=False``: the chosen trial's model,
        whose history is on the validation split) on ``train_data`` split 80/20 (``seed``) in ``duration`` seconds
        from ``base``; then its trial table, plot, chosen setting and accuracy on ``test_data`` shown, and last
        autotune.png and autotune_trials.csv saved in :meth:`run_folder` (:meth:`save_autotune`). Returns the
        :class:`~fasttext_lib.autotune.AutotuneResult`.

        Done in the cell, a Stop after the search (scoring the test split, drawing, saving) was IPython's traceback,
        and came after the plot and table of a model the cell never kept were saved. Here a Stop anywhere is one line
        saying where it came and that nothing was saved (an earlier run's files stay as they were)."""
        import matplotlib.pyplot as plt

        from .autotune import SEARCHED, autotune, split_validation, stop_line

        note_stop_line(stop_line("before the autotune search's first trial"))
        search_train, search_val = split_validation(train_data, fraction=0.2, seed=seed)
        tuned = autotune(search_train, search_val, duration=duration, base=base, refit=False)
        n = len(tuned.trials)
        after = f"after the autotune search ({n} trial{'s' * (n != 1)})"
        note_stop_line(stop_line(f"{after}, while showing its results"))
        accuracy = tuned.evaluate(test_data)["accuracy"]
        fig = plt.figure(figsize=(8, 3))
        try:
            _plot_trials(fig, tuned)
            _show(tuned.trials.round(4))
            _show(fig)
            print("chosen:", {k: getattr(tuned.best_config, k) for k in SEARCHED})
            print("test accuracy of the tuned model:", round(accuracy, 4))
            note_stop_line(f"stopped by the user {after}, while saving its plot and trial table; neither was saved (an "
                           f"earlier run's in {self.show(key_path(run_name, 'run_name'))} are as they were); run the "
                           f"cell again to start over")
            self.save_autotune(tuned.trials, fig, run_name)  # last: a Stop before it has saved nothing
            # A Stop from here on came after the save (it was said as "neither was saved"). One after this call has
            # returned, before the cell's assignment, is the cell's own (IPython's traceback): no library code runs there.
            note_stop_line(f"stopped by the user {after}, just after saving its plot and trial table in "
                           f"{self.show(key_path(run_name, 'run_name'))}; the cell did not keep its result (its "
                           f"variables are as they were); run the cell again to start over")
        finally:
            plt.close(fig)  # shown once (the inline backend shows the figures still open at the cell's end)
        return tuned

    def save_run(self, trained, run_name, fig, data=None, dpi=100):
        """Notebook 02's model and its history: the bundle :meth:`model` names (``bundle.save_bundle``; ``data``: its
        record, :func:`data_record`), and ``history.csv`` (``trained``'s history) and ``history.png`` (``fig``, marked
        as ours) in :meth:`run_folder`, saved together or not at all. The history is written in full, put in place
        (the older one kept aside), then the bundle is saved; a save that fails (a denied write, a lost endpoint, the
        Stop button) puts the older history back. Written by the plot's cell, before the save, a failed save left the
        history of a model never saved beside the run's older bundle, as if of it; and put in place after the bundle
        was saved, a rename that failed then (a file bind-mounted into a container: EBUSY) left the new bundle beside
        the older history. Returns the bundle's URI."""
        from .bundle import save_bundle

        folder = self.run_folder(run_name)
        paths = [str(folder / HISTORY_TABLE), str(folder / HISTORY_PLOT)]
        saved = []
        # on_written: called once both files are in place; where it fails, the files they replaced are put back
        with storage.atomic_writes(paths, on_written=lambda: saved.append(
                save_bundle(trained, self.model(run_name), data=data))) as (table, plot):
            table.write(trained.history_frame().to_csv().encode("utf-8"))
            fig.savefig(plot, format="png", dpi=dpi, metadata={"Software": FIGURE_MARK})
        return saved[0]

    def drop_autotune(self, run_name):
        """Remove the autotune outputs of an earlier run of ``run_name`` from its :meth:`run_folder` (a run without
        autotune): left there, a trial table and plot of another search sat beside this run's model and history. Only files this library
        wrote go: the table by its header (the trial table's columns), the plot by its mark; a file of yours
        under either name, a link or a folder is left alone. Says on stderr what it removed; returns the names."""
        from .autotune import TABLE_COLUMNS, TRIAL_COLUMNS

        def first_line(path):
            with open(path, "rb") as f:
                return f.readline(1 << 16).rstrip(b"\r\n")

        headers = {",".join(TABLE_COLUMNS).encode(), ",".join(TRIAL_COLUMNS).encode()}  # (the 2nd: before "ended")
        ours = {AUTOTUNE_PLOT: lambda path: png_software(path) == FIGURE_MARK,
                AUTOTUNE_TABLE: lambda path: first_line(path) in headers}
        folder, removed = self.run_folder(run_name), []
        for name, is_ours in ours.items():
            path = folder / name
            if path.is_symlink() or not path.is_file():
                continue
            if is_ours(path):
                path.unlink()
                removed.append(name)
        if removed:
            print(f"removed {' and '.join(removed)} from {self.show(key_path(run_name, 'run_name'))}: an earlier autotune run's, not this model's",
                  file=sys.stderr)
        return removed

    def __repr__(self):
        return f"Workspace(s3: {self.base}, local: {os.path.relpath(self.out)})"


def _plot_trials(fig, tuned):
    """The search's validation accuracy by trial, the chosen trial starred."""
    ax = fig.subplots()
    ax.plot(tuned.trials.trial, tuned.trials.val_accuracy, marker="o")
    ax.plot(tuned.best_trial.trial, tuned.best_trial.val_accuracy, marker="*", markersize=14, color="tab:red",
            label="chosen")
    ax.set_xlabel("trial")
    ax.set_ylabel("validation accuracy")
    ax.legend()
    fig.tight_layout()


def _show(thing):
    """``thing`` shown as a notebook shows a cell's value (a table as a table, a figure as its image); outside
    IPython, printed (a figure: nothing, it is saved)."""
    if _kernel_shell() is not None:
        from IPython.display import display

        display(thing)
    elif not hasattr(thing, "savefig"):
        print(thing)


def documents_sha256(data):
    """A fingerprint of a :class:`~fasttext_lib.data.LabeledTexts`' documents (labels and texts, in order): the same
    documents give the same one wherever and however often they were written (S3's ETags differ under SSE-KMS)."""
    digest = hashlib.sha256()
    for label, text in zip(data.labels, data.texts):
        for part in (str(label), text):
            raw = part.encode("utf-8", "surrogatepass")
            digest.update(len(raw).to_bytes(8, "little") + raw)
    return digest.hexdigest()


def data_record(test_uri, test_data):
    """What notebook 02 stores in its bundle (``save_bundle(..., data=)``, metrics.json's ``"data"``): the test split
    it read, where it was and its documents' fingerprint, which 04 checks (:func:`check_tested_on`)."""
    return {"test": {"uri": str(test_uri), "documents": len(test_data), "sha256": documents_sha256(test_data)}}


def check_tested_on(predictor, test_uri, test_data, dataset):
    """One error unless ``test_data`` (read from ``test_uri`` by 04) is the test split 02 read when it trained the
    model ``predictor`` was loaded from. 01 run again with other settings after 02 (and 02 skipped, or stopped by a
    Ctrl-C or a diverged run), or a ``run_name`` given to 02 and 04 with other datasets: 04 scored the old model on
    the new documents beside the old run's "final test accuracy at training", as one run. A bundle without the
    record (saved by the CLI, a training job or an older 02) is not checked."""
    recorded = (getattr(predictor, "metrics", None) or {}).get("data") or {}
    tested = recorded.get("test") if isinstance(recorded, dict) else None
    if not isinstance(tested, dict):
        return
    bundle_uri = predictor.source
    if tested.get("uri") != str(test_uri):
        raise FastTextError(f"the model at {bundle_uri} was tested on {tested.get('uri')}, not on {test_uri} "
                            f"(dataset={dataset!r}): run this notebook with the dataset 02 trained it on, or score it "
                            f"on these documents with python -m fasttext_lib evaluate --model {bundle_uri} --data "
                            f"{test_uri}")
    if tested.get("sha256") != documents_sha256(test_data):
        then = tested.get("documents")
        counts = f" ({len(test_data)} documents, {then} then)" if then != len(test_data) else ""
        raise FastTextError(f"{test_uri} holds other test documents than when the model at {bundle_uri} was trained"
                            f"{counts}: notebook 01 wrote it again since; run notebook 02 again to train on the data "
                            f"as it is now")


def bundle_name(run_name, dataset):
    """02's and 04's ``run_name``: as given, else the dataset's name (a run on other data keeps its own bundle), as a
    key path (:func:`key_path`). A dataset that names no data is refused naming ``dataset``: ``-p dataset None`` said
    "run_name must name a folder, got None", a parameter the user had not given (and 04 said so only at its load)."""
    if run_name is not None and run_name != "":
        return key_path(run_name, "run_name")
    if not isinstance(dataset, str) or not dataset.strip("/"):
        raise FastTextError(f"dataset must name the data notebook 01 prepared (such as 'sample'), got {dataset!r}")
    return key_path(dataset, "dataset")


def key_path(value, name, empty_ok=False):
    """``value`` as a path of S3 key parts (``a/b``), its outer slashes dropped, or one error naming ``name``: a part
    that is empty, ``.`` or ``..`` (``-p run_name /big`` saved the bundle as models//big, in a folder of no name in the
    S3 console, beside models/big), or an ``s3://`` URI given as the path inside the bucket (its parts were keys
    under s3:/). A number is its text (``-p run_name 2024``: papermill passes the number)."""
    if value is None or value == "":
        if empty_ok:
            return ""
        raise FastTextError(f"{name} must name a folder, got {value!r}")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise FastTextError(f"{name} must be a folder's name (a/b for folders), got {value!r}")
    text = str(value)
    if text.lower().startswith("s3:"):
        raise FastTextError(f"{name} is the path inside the bucket (no s3://bucket/), got {text!r}")
    path = text.strip("/")
    if not path and empty_ok:
        return ""
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise FastTextError(f"{name} must be folder names joined by / (no empty, . or .. part), got {text!r}")
    return path


# Notebook 01's own datasets, beside the downloadable ones (download.DATASETS).
BUILT_IN_DATASETS = ("sample", "synthetic")


def check_dataset(dataset):
    """Notebook 01's ``dataset``: ``sample``, ``synthetic`` or a downloadable name; else one error listing them all,
    with the closest (``Sample``: ``sample``; ``yelp``: the two Yelp sets). The download's own check listed the
    downloadable ones alone, as if ``sample`` were not a choice (``-p dataset Sample``)."""
    from .download import DATASETS

    known = list(BUILT_IN_DATASETS) + sorted(DATASETS)
    if isinstance(dataset, str) and dataset in known:
        return
    text = dataset.lower() if isinstance(dataset, str) else ""  # a list (-y), a number: no hint
    close = (difflib.get_close_matches(text, known, 2) or [name for name in known if name.startswith(text)]) if text else []
    hint = f" (did you mean {' or '.join(repr(name) for name in close)}?)" if close else ""
    raise FastTextError(f"unknown dataset {dataset!r}{hint}; choose one of {', '.join(known)}")


def check_flags(**flags):
    """A notebook's yes/no parameters, each True or False (one error naming the first that is not).
    papermill's ``-p autotune false`` passes the text ``'false'`` (only ``True`` and ``False`` become
    booleans), which Python takes as true: the autotune search (or a billed training job) ran."""
    for name, value in flags.items():
        check_bool(value, name, f" (papermill: -p {name} True, or -p {name} False)")


def check_query_words(query_words):
    """Notebook 04's ``query_words``: a list (or tuple) of words, or None (the words with the largest vectors); else one
    error. papermill's ``-p query_words "[great, bad]"`` passes the list's text, whose letters were taken as the words."""
    if query_words is None:
        return
    if not isinstance(query_words, (list, tuple)) or not all(isinstance(w, str) for w in query_words):
        raise FastTextError(f"query_words must be a list of words or None, got {query_words!r} "
                            f"(papermill: -y \"query_words: [great, bad]\")")


def check_word_pairs(word_pairs):
    """Notebook 04's ``word_pairs``: a list (or tuple) of (word, word) pairs, else one error (papermill's ``-p`` passes
    a list as its text, and a pair of three words failed only at the last cell)."""
    if not isinstance(word_pairs, (list, tuple)) or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(w, str) for w in p) for p in word_pairs):
        raise FastTextError(f"word_pairs must be a list of (word, word) pairs, got {word_pairs!r} "
                            f"(papermill: -y \"word_pairs: [[great, excellent]]\")")


def png_software(path):
    """The "Software" text of the PNG file ``path``, or ``None`` (no such text, or no PNG image). Pillow,
    which matplotlib requires, reads the text chunks matplotlib writes before the image data."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.info.get("Software") if image.format == "PNG" else None
    except (OSError, ValueError, Image.DecompressionBombError):  # OSError: no image Pillow knows
        return None


def assigned_names(source):
    """The names a cell's code assigns at its top level, in order (``a = 1``, ``b: int = 2``, ``c, d = ...``);
    none for code that does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            names.extend(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return list(dict.fromkeys(names))


def name_hints(unknown, known):
    """``'epoch' (did you mean 'epochs'?), 'bukcet' (did you mean 'bucket'?)``: each unknown name with the
    closest known one, where there is one."""
    return ", ".join(f"{name!r}" + "".join(f" (did you mean {m!r}?)" for m in difflib.get_close_matches(name, known, 1))
                     for name in unknown)


def check_parameters(namespace):
    """Refuse a parameter that papermill injected but the notebook does not have (call it with ``globals()``
    in the cell after the parameters cell).

    ``papermill nb.ipynb out.ipynb -p epoch 1`` (for ``epochs``) only warns "Passed unknown parameter"
    and runs the notebook with its defaults: minutes of work with the wrong settings. A running kernel
    cannot see papermill's metadata, but it keeps the code of every cell it ran, in order (IPython's
    ``In``): papermill's cell, which starts with ``# Parameters``, runs right after the parameters cell.
    The names it assigns must be among those that the cells run before it (the parameters cell) assign.
    Without that cell in the history (Jupyter, nbval, ``make demo``'s known names) there is nothing to check.

    It also makes the kernel show a :class:`FastTextError` as its one ``error: ...`` line
    (:func:`~fasttext_lib.notebook_errors.show_errors_as_lines`), from this cell on.
    """
    show_errors_as_lines()
    history = namespace.get("In")
    if not isinstance(history, list):
        return
    injected = [i for i, source in enumerate(history)
                if isinstance(source, str) and source.lstrip().split("\n", 1)[0].strip() == PAPERMILL_HEADER]
    if not injected:
        return
    at = injected[-1]
    declared = set()
    for source in history[:at]:
        if isinstance(source, str):
            declared.update(assigned_names(source))
    unknown = [name for name in assigned_names(history[at])
               if name not in declared and not name.startswith("PAPERMILL_")]  # --inject-paths' own two
    if unknown:
        parameters_cell = history[at - 1] if at > 0 and isinstance(history[at - 1], str) else ""
        listed = assigned_names(parameters_cell) or sorted(declared)
        raise FastTextError(f"this notebook has no parameter {name_hints(unknown, listed)} (papermill only warned, "
                            f"and the run would have used the defaults); its parameters: {', '.join(listed)}")
