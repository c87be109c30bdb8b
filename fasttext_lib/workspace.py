"""Where one run's files live: its S3 prefix (data, models) and a local folder (figures, tables).

The notebooks, the CLI examples and the SageMaker helpers all use one layout under
``s3://{bucket}/{prefix}/``: ``data/`` for the prepared ``.train``/``.test`` files and ``models/``
for bundles (sagemaker_utils.py adds ``code/``, ``jobs/``, ``checkpoints/``, ``serving/``). Figures
and tables go to a local ``output_dir``, notebook 02's of each run in its own folder, ``{output_dir}/{run_name}/``
(:meth:`Workspace.run_folder`: a second run, of another name, replaced the first one's history), with notebook 04's
files of that run's bundle (:meth:`Workspace.save_predictions` and the others, inference_files.py); notebook 01's and
03's of each dataset in ``{output_dir}/{dataset}/`` (:meth:`Workspace.dataset_folder`: a run's folder too, as its
run_name is the dataset's unless given). 02's autotune
plot and table and 04's files are recorded as written (written_record.py), and removed once 02 saves another bundle
for the run only while they are as written. 02's history is recorded with the bundle it is of: the run folder is one
for every bucket and prefix, and a save for another's keeps the history it replaces aside (``history.exp1.csv``), and
an autotune search's files too, recorded as of that bundle, whose own next save removes them; removes only those of
the bundle it replaced. Notebook 01's files of the data it writes are written only while that data is still the data
at S3 (:meth:`Workspace.writing_data`). ``output_dir`` is a local folder (an
``s3://`` one is refused). A relative ``output_dir`` is taken from the working directory, which Jupyter, ``make demo`` and nbval all set to the
notebook's folder (papermill's command line keeps the shell's unless given ``--cwd``).

The notebooks' parameters are checked by notebook_params.py, their figures drawn and shown by figures.py, and the
record of the test split a bundle was tested on is provenance.py's.
"""
import contextlib
import hashlib
import itertools
import os
import shutil
import sys
from pathlib import Path

from . import inference_files, storage
from .errors import FastTextError, close_choices, printable, refuse_standard_output, said_as_meant
from .stops import keeping_stops, note_stop_line, note_what_a_stop_left, note_written, telling_stops
from .figures import plot_trials, png_bytes, show
from .notebook_params import check_dataset, is_a_known_name_misspelt, key_path
from .writers import splits_written_line
from .written_record import WrittenRecord, is_kept_name, kept_name, whose_part

# Notebook 01's cache of downloaded archives, in output_dir: no dataset's or run's folder (Workspace._folder)
DOWNLOADS = "downloads"
# Notebook 02's autotune outputs in the run's local folder: the trial plot and table.
AUTOTUNE_PLOT, AUTOTUNE_TABLE = "autotune.png", "autotune_trials.csv"
# What the library wrote of them: only those, as written, are removed once another model is saved for the run.
AUTOTUNE_RECORD = WrittenRecord("autotune_written.json", (AUTOTUNE_PLOT, AUTOTUNE_TABLE),
                                "notebook 02's autotune search")
# Notebook 02's history of the model it saves, in the run's local folder: the plot of each epoch's scores and the table.
HISTORY_PLOT, HISTORY_TABLE = "history.png", "history.csv"
# Which bundle they are of: the folder is run_name's for every bucket and prefix, and 02 run to prefix exp2 replaced the
# history of exp1's bundle without a word; it is kept aside now, under names that say whose (Workspace._keep_aside).
HISTORY_RECORD = WrittenRecord("history_written.json", (HISTORY_TABLE, HISTORY_PLOT), "notebook 02's history")
# The most List requests (1,000 entries each, a folder's subfolders one entry) made for the prepared datasets' names
# that a mistyped one is offered (Workspace.prepared), its folder's and one folder deeper's in all: 10,000 entries, about
# 3,000 datasets of a train, test and classes file.
NAMES_LISTED_PAGES = 10


def _listed(bucket, prefix, pages):
    """The keys and the subfolders (``.../``) directly under ``prefix`` and the List requests made for them, at most
    ``pages`` (1,000 entries each, a subfolder one entry). A List S3 refuses or that fails ends it: what was listed
    before it is returned."""
    keys, subfolders, made = [], [], 0
    with contextlib.suppress(Exception):
        listing = storage.s3_client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix,
                                                                               Delimiter="/")
        for page in itertools.islice(listing, pages):
            made += 1
            keys += [entry["Key"] for entry in page.get("Contents", [])]
            subfolders += [entry["Prefix"] for entry in page.get("CommonPrefixes", [])]
    return keys, subfolders, made


def _prepared_names(keys, data, split):
    """The datasets the ``keys`` under ``data`` (``.../data/``) hold a ``split`` of: ``data/exp/drug.train`` is
    ``exp/drug``'s (with its folder), as Workspace.prepared names them."""
    suffix = f".{split}"
    names = (key[len(data):-len(suffix)] for key in keys if key.endswith(suffix))
    return sorted(name for name in names if name and not name.endswith("/"))


def _write_together(paths, contents):
    """Each of ``contents`` (bytes) to its path of ``paths``, all written in full before any replaces an older file
    (storage.atomic_writes; overwriting is the notebooks' way: they have no command to rerun with a flag)."""
    with storage.atomic_writes(paths, overwrite_as=storage.OVERWRITE_ARGUMENT) as written:
        for f, content in zip(written, contents):
            f.write(content)


class Workspace:
    """``Workspace(bucket, prefix, output_dir)``: ``.data`` and ``.models`` (``s3://`` prefixes),
    ``.out`` (a local folder, created once asked for) and ``.show(name)`` (a path to print: relative, as given)."""

    def __init__(self, bucket, prefix, output_dir):
        # a list or dict (papermill -y), or a name with a space or quotes (-p bucket '""'), reached boto, whose
        # refusal quoted two regular expressions; an int is a name (-p bucket 2024)
        if isinstance(bucket, bool) or not isinstance(bucket, (str, int)) or not storage.could_name_a_bucket(
                str(bucket)):
            raise FastTextError(f"bucket must be an S3 bucket name ({storage.BUCKET_NAME_RULES}; no s3://, no /), "
                                f"got {bucket!r}")
        if not isinstance(output_dir, (str, os.PathLike)) or not str(output_dir).strip():
            # papermill -p output_dir None passes None: a TypeError traceback from pathlib; "" was the notebooks' folder
            raise FastTextError(f"output_dir must be a folder's path, got {output_dir!r}")
        refuse_standard_output(output_dir, "output_dir", "the notebooks' outputs", "a directory")
        # "/" is no prefix (it made keys beginning with a slash)
        self.base = storage.prefix_uri(bucket, key_path(prefix, "prefix", empty_ok=True))
        if _is_a_uri(output_dir):  # pathlib read s3://b/out as a relative path: a local folder named s3: got the files
            raise FastTextError(f"output_dir is a local folder (for the figures and tables), got {str(output_dir)!r}: "
                                f"the data and bundles go to S3 by bucket and prefix, under {self.base}/")
        self.data = f"{self.base}/data"
        self.models = f"{self.base}/models"
        self._shown = Path(output_dir)
        # ~ as the shell would read it: "~/SageMaker/out" made a folder named ~ beside the notebooks, while the
        # printed paths (as given) pointed into the home folder (~name stays a name: storage.expand_home)
        self._out = Path(storage.expand_home(output_dir)).resolve()
        self._check_output_dir()
        # the run folders whose earlier autotune files go once save_run has saved their run's model (drop_autotune)
        self._dropping_autotune = set()
        # run folder -> (the search's model, {file name: bytes}): autotune's plot and table, put in place by save_run
        # with that model (written by the autotune cell, a save that then failed left them beside the older bundle)
        self._staged_autotune = {}
        # dataset -> what its prepared data at S3 was just after notebook 01 wrote it (writing_data): 01's files of it
        # are written only while it still is (save_dataset_files)
        self._data_written = {}

    def _check_output_dir(self):
        """``out`` can be made, and files written in it: a file of that name, a folder under a file, a read-only
        disk or /proc was an OSError traceback here, or (a folder that exists, read-only) in the first cell that
        saved a figure, after the work. Nothing is made yet (:attr:`out`)."""
        try:
            storage.check_writable(str(self._out), what=str(self._shown))
        except FastTextError as exc:
            raise FastTextError(f"output_dir {str(self._shown)!r} cannot hold the figures and tables: {exc}") from None

    @property
    def out(self):
        """The local folder, made the first time it is asked for (a file is about to go in it). Made by the check
        cell's Workspace, it was left behind, empty, where a parameter checked after it was refused (-p epochs 0)."""
        try:
            self._out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FastTextError(f"output_dir {str(self._shown)!r} cannot hold the figures and tables: cannot create "
                                f"{self._out}: {exc.strerror or exc}") from None
        return self._out

    @property
    def download_cache(self):
        """Notebook 01's cache of the archives it downloads, ``out/downloads`` (not created): no dataset or run may
        take its name (:meth:`_folder`)."""
        return self._out / DOWNLOADS

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
            own = ""
            try:  # a name 01 refuses (-p dataset Sample) was told to run 01 with it
                check_dataset(dataset)
            except FastTextError as exc:
                if is_a_known_name_misspelt(dataset):
                    raise FastTextError(f"no prepared {split} data for dataset {dataset!r} at {uri}: {exc}") from None
                # a name of the user's own, which 01 prepares from train_file (it was told "unknown dataset")
                own = " (and train_file=, your file, for your own data)"
            # (Drug for the drug 01 prepared was told to run 01 with 'Drug': as if there were no such data)
            raise FastTextError(f"no prepared {split} data for dataset {dataset!r} at {uri}{self._meant(dataset, split)}"
                                f": run notebook 01 with dataset={dataset!r}{own} and this bucket and prefix first")
        return uri

    def _meant(self, dataset, split):
        """``" (did you mean 'exp/drug' or 'drugs'?)"`` for a ``dataset`` prepared with no ``split``
        (errors.did_you_mean): the two closest of the datasets prepared with one (``data/{name}.{split}``) in its folder
        (``exp/Drug``: those in ``data/exp/``) and of those one folder deeper by their own name (``drug`` asked,
        ``exp/drug`` prepared: it was offered nothing), closest first; only the folder's own where one is the name
        itself (in other capitals). (Those deeper were looked at only where none in the folder was close: ``drug`` was
        offered ``drugs`` alone, not ``exp/drug``.) Listed a folder at a time (its subfolders one entry each) in at
        most :data:`NAMES_LISTED_PAGES` List requests of 1,000 entries in all, the folder's own first, then the first
        1,000 entries of each subfolder in turn while requests are left: never the whole bucket. Nothing where S3
        refuses the List (a role without s3:ListBucket) or fails: the error it would hint at is said all the same."""
        if not storage.is_s3(self.data):
            return ""
        bucket, data = storage.split_s3(self.data)
        data = data.rstrip("/") + "/"
        folder = key_path(dataset, "dataset").rpartition("/")[0]
        keys, subfolders, made = _listed(bucket, data + (folder + "/" if folder else ""), NAMES_LISTED_PAGES)
        close = close_choices(dataset, _prepared_names(keys, data, split), 2)
        if not subfolders or (close and close[0][0] == 1.0):  # (the name itself: the one meant)
            return said_as_meant(close)
        deeper = [key for sub in subfolders[:NAMES_LISTED_PAGES - made] for key in _listed(bucket, sub, 1)[0]]
        close += close_choices(dataset, _prepared_names(deeper, data, split), 2,
                               key=lambda name: name.rpartition("/")[2])
        return said_as_meant(sorted(close, key=lambda rated: -rated[0])[:2])  # (a tie: the folder's own first)

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
        return self._folder(run_name, "run_name", "its history")

    def dataset_folder(self, dataset):
        """The local folder of notebook 01's and 03's files of ``dataset`` (01's length histogram, 03's timings, costs
        and throughput chart), ``out/{dataset}``: by default the folder of 02's and 04's run of it too (run_name: the
        dataset's name). In ``out`` itself, 01 run on synthetic replaced the sample's histogram. Not created: one error
        now if it cannot be (a file of that name in the way), which 01's and 03's check cells find before the work."""
        return self._folder(dataset, "dataset", "its figures and tables")

    def _folder(self, name, parameter, holding):
        """``out/{name}`` (a key path: ``exp/1`` is a folder in a folder), checked as one that can be made and written,
        not created; else one error naming ``parameter`` and what the folder would hold."""
        path = key_path(name, parameter)
        folder = self._out / path  # (made by the first write in it)
        # named downloads, it was 01's cache: its figures in among the archives (Downloads too where names are
        # case-blind, as on macOS)
        if path.split("/")[0].casefold() == DOWNLOADS:
            raise FastTextError(f"{parameter} {name!r} cannot be a folder of output_dir for {holding}: "
                                f"{self.show(DOWNLOADS)} is notebook 01's download cache; give another name")
        try:
            storage.check_writable(str(folder), what=self.show(path))
        except FastTextError as exc:
            raise FastTextError(f"{parameter} {name!r} cannot be a folder of output_dir for {holding}: {exc}") from None
        return folder

    @contextlib.contextmanager
    def writing_data(self, dataset):
        """Notebook 01's write of ``dataset``'s splits (prepare, write_fasttext_splits, write_own_splits) in this block,
        under the lock 01's files of that dataset are written under (:meth:`save_dataset_files`); at its end, what the
        data at S3 then is (its objects' ETags and versions: HEAD requests) is noted, and 01's files are written only
        while it still is. Two runs of 01 at once into one prefix (two papermill runs) each wrote the length histogram
        of its own data, and the data of one stayed beside the histogram of the other; now the run whose data was
        replaced writes none, the other run's histogram is of the data that stayed. (Runs of one output_dir, as the
        lock is local: runs on two machines write two output_dirs.)"""
        with self._data_files_locked(dataset):
            yield
            self._note_the_data_written(dataset)

    @telling_stops(lambda self, dataset: splits_written_line(self.data, dataset))
    def _note_the_data_written(self, dataset):
        """:meth:`writing_data`'s note of the data just written (its HEAD requests: a slow S3 may take seconds); a
        Stop meanwhile is the one line of a Stop at the end of 01's write, saying that the data is written (it is),
        where it was IPython's traceback through boto."""
        self._data_written[dataset] = self._data_now(dataset)

    @contextlib.contextmanager
    def _data_files_locked(self, dataset):
        """The lock of :meth:`writing_data` and 01's :meth:`save_dataset_files`: an flock on the lock file of the
        dataset's folder (both made; storage.LOCK_NAME, as a local bundle's), waited for as long as another run writes
        that dataset's data, said in one line (the kernel lets go of a killed run's). Not the folder's own, which its
        files' writes take (storage's renames): this process would wait on itself; nor its parent's, which the folders
        of all datasets share: 01 on yelp waited, without a word, for all of 01 on ag_news (its download too) in one
        output_dir. Uncontended, it costs a single run nothing; where the file system has no locks, none is held."""
        folder = self.dataset_folder(dataset)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder / storage.LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise FastTextError(f"cannot write {folder}: {exc.strerror or exc}") from None
        try:  # (the Stop button still stops a wait)
            storage.flock_saying_a_wait(fd, f"waiting for another run of notebook 01 writing "
                                            f"{self.data}/{key_path(dataset, 'dataset')}.* to finish")
            yield
        finally:
            os.close(fd)  # (the lock with it)

    def _data_now(self, dataset):
        """What ``dataset``'s prepared files at S3 are now: each one's ETag, version and time (HEAD), or None where
        there is none or S3 refuses to say (then nothing can tell two writes apart, and 01's files are written)."""
        found = []
        for split in ("train", "test", "classes.txt"):
            bucket, key = storage.split_s3(f"{self.data}/{key_path(dataset, 'dataset')}.{split}")
            try:
                head = storage.s3_client().head_object(Bucket=bucket, Key=key)
                found.append((head.get("ETag"), head.get("VersionId"), str(head.get("LastModified"))))
            except Exception:  # (missing, or refused: not known)
                found.append(None)
        return tuple(found)

    @telling_stops(lambda self, dataset, files, *_, **__: f"stopped by the user while saving "
                   f"{' and '.join(self._shown_dataset_files(dataset, files))}; the earlier files there, if any, are "
                   f"as they were; run the cell again to save them",
                   done=lambda self, dataset, files, *_, **__: f"stopped by the user once "
                   f"{' and '.join(self._shown_dataset_files(dataset, files))} were saved")  # (01's HEADs, a lock wait)
    def save_dataset_files(self, dataset, files, dpi=100):
        """Notebook 01's and 03's ``files`` of ``dataset``, ``{name: a matplotlib figure or a pandas DataFrame}``, in
        :meth:`dataset_folder`: figures as PNG (marked as ours), tables as CSV with their index, all written in full
        before any replaces an older one (a Stop or a full disk part way leaves the earlier ones as they were; 03's
        timings never beside another run's costs). Returns their paths as :meth:`show` prints them, in order.

        After 01's write of the dataset's data (:meth:`writing_data`), only while that data is still the data at S3,
        under the lock of its write: written over by another run of 01 since, they are not written (said in one line),
        and that run's, of the data that stays, stay; a None in place of each path then (the paths were returned, and
        01's last cell printed the other run's histogram as this run's)."""
        folder, shown = self.dataset_folder(dataset), key_path(dataset, "dataset")
        contents = [png_bytes(thing, dpi) if hasattr(thing, "savefig") else thing.to_csv().encode("utf-8")
                    for thing in files.values()]
        paths = self._shown_dataset_files(dataset, files)
        if dataset not in self._data_written:  # (03's; 01's of no data this Workspace wrote)
            _write_together([str(folder / name) for name in files], contents)
            return paths
        with self._data_files_locked(dataset):
            if _changed(self._data_written[dataset], self._data_now(dataset)):
                print(f"not written: {' and '.join(paths)}: the data at {self.data}/{shown}.* was written again by "
                      f"another run since this run wrote it; that run's files are of the data there", file=sys.stderr)
                return [None] * len(paths)
            _write_together([str(folder / name) for name in files], contents)
        return paths

    def _shown_dataset_files(self, dataset, files):
        """The paths :meth:`save_dataset_files` returns for ``files`` of ``dataset``, as :meth:`show` prints them."""
        return [self.show(f"{key_path(dataset, 'dataset')}/{name}") for name in files]

    @staticmethod
    def _autotune_files(trials, fig, dpi):
        """{name: bytes} of a search's files, which :meth:`autotune` keeps for :meth:`save_run`: the plot (marked as
        ours) and the trial table."""
        return {AUTOTUNE_PLOT: png_bytes(fig, dpi), AUTOTUNE_TABLE: trials.to_csv(index=False).encode("utf-8")}

    @keeping_stops  # the Stop button: one line anywhere in the cell (stops.kept_stops, notebook_errors), not a traceback
    def autotune(self, train_data, test_data, base, run_name, duration, seed=0):
        """Notebook 02's autotune cell: the search (autotune.autotune, ``refit=False``: the chosen trial's model,
        whose history is on the validation split) on ``train_data`` split 80/20 (``seed``) in ``duration`` seconds
        from ``base``; then its trial table, plot, chosen setting and accuracy on ``test_data`` shown, and last
        autotune.png and autotune_trials.csv kept (in memory) for :meth:`save_run` of the chosen model
        (``.trained``), which puts them in :meth:`run_folder` with it. Written here, before the save cell, a save that
        then failed left the older bundle and history beside this search's files. Returns the
        :class:`~fasttext_lib.autotune.AutotuneResult`.

        Done in the cell, a Stop after the search (scoring the test split, drawing) was IPython's traceback. Here a
        Stop anywhere is one line saying where it came and that nothing was saved (an earlier run's files stay as they
        were; a save of any model but this search's never writes its files)."""
        import matplotlib.pyplot as plt

        from .autotune import SEARCHED, autotune, split_validation, stop_line
        from .data import CountedTexts

        if isinstance(train_data, CountedTexts):  # (its 80/20 split was an AttributeError traceback)
            raise FastTextError("autotune splits the training texts, which the data cell read with autotune=False "
                                "does not keep (it streams them, own_data.read_prepared): run the data cell again "
                                "with autotune=True, then this one")
        # (a file of yours named as the record, which the save would refuse: said before the minutes of the search)
        AUTOTUNE_RECORD.check_writable(self.run_folder(run_name), "the autotune search not run")
        note_stop_line(stop_line("before the autotune search's first trial"))
        search_train, search_val = split_validation(train_data, fraction=0.2, seed=seed)
        # verbose=False: the search's lines on stderr are the CLI's; the cell shows the trial table as a table, below
        # (both, it showed the table twice, once as text among the stderr lines)
        tuned = autotune(search_train, search_val, duration=duration, base=base, refit=False, verbose=False)
        n = len(tuned.trials)
        after = f"after the autotune search ({n} trial{'s' * (n != 1)})"
        note_stop_line(stop_line(f"{after}, while showing its results"))
        accuracy = tuned.evaluate(test_data)["accuracy"]
        fig = plt.figure(figsize=(8, 3))
        try:
            plot_trials(fig, tuned)
            show(tuned.trials.round(4))
            show(fig)
            print("chosen:", {k: getattr(tuned.best_config, k) for k in SEARCHED})
            print("test accuracy of the tuned model:", round(accuracy, 4))
            folder, files = self.run_folder(run_name), self._autotune_files(tuned.trials, fig, dpi=100)
            # for the save of this search's model only: a Stop from here on, before the cell keeps the result, leaves
            # them to a model no variable holds (nothing was saved, as the line says)
            self._staged_autotune[folder] = (tuned.trained, files)
            self._dropping_autotune.discard(folder)  # (replaced by this search's own once saved)
        finally:
            plt.close(fig)  # shown once (the inline backend shows the figures still open at the cell's end)
        return tuned

    @telling_stops(lambda self, trained, run_name, *_, **__: f"stopped by the user while saving the bundle "
                   f"{self.model(run_name)} and its history to {self.show(key_path(run_name, 'run_name'))}; nothing "
                   f"was saved: the earlier bundle and history are as they were; run the cell again to save them",
                   done=lambda self, trained, run_name, *_, **__: f"stopped by the user once the bundle was saved to "
                   f"{self.model(run_name)} with its history in {self.show(key_path(run_name, 'run_name'))} (files "
                   f"there of the bundle it replaced, 04's or an earlier search's, may be left)")  # (one line)
    def save_run(self, trained, run_name, fig, data=None, dpi=100):
        """Notebook 02's model and its history: the bundle :meth:`model` names (``bundle.save_bundle``; ``data``: its
        record, :func:`~fasttext_lib.provenance.data_record`), and ``history.csv`` (``trained``'s history) and ``history.png`` (``fig``, marked
        as ours) in :meth:`run_folder`, with the plot and table of the search that chose ``trained`` (:meth:`autotune`),
        saved together or not at all. The history is written in full, put in place
        (the older one kept aside), then the bundle is saved; a save that fails (a denied write, a lost endpoint, the
        Stop button) puts the older history back. Written by the plot's cell, before the save, a failed save left the
        history of a model never saved beside the run's older bundle, as if of it; and put in place after the bundle
        was saved, a rename that failed then (a file bind-mounted into a container: EBUSY) left the new bundle beside
        the older history. Returns the bundle's URI. A search's files (none where ``trained`` is not its model)
        are put in place and back with the history, and their record (:data:`AUTOTUNE_RECORD`); an earlier run's (of
        the model replaced) go once the bundle is saved where this model is not a search's (:meth:`drop_autotune`), and
        so do notebook 04's files, of the bundle replaced (:meth:`remove_inference`): they were left beside the new
        one, as if of it. Both only as recorded, and unchanged.

        A save that replaced an earlier bundle of ``run_name`` says so on stderr, naming that bundle (when it was saved,
        its epochs and n-grams) and how to keep both next time: notebook 02 run again to the same ``run_name`` (the
        dataset's, unless given) replaced it with no word of it. The history is recorded with the bundle it is of
        (:data:`HISTORY_RECORD`); one of another bucket's or prefix's bundle (the folder is one for all of them) is
        kept aside as the save replaces it (:meth:`_keep_aside`; a search's plot and table too), said in one line: it
        was replaced without a word."""
        from .bundle import save_bundle, saved_before, undecided_line

        dest = self.model(run_name)
        folder = self.run_folder(run_name)
        search_model, search_files = self._staged_autotune.get(folder, (None, {}))
        searched = dict(search_files) if search_model is trained else {}
        if searched:  # their record, put in place with them (its bytes below, once the copies kept aside are made)
            searched[AUTOTUNE_RECORD.name] = None
        paths = [str(folder / n) for n in (HISTORY_TABLE, HISTORY_PLOT, HISTORY_RECORD.name, *searched)]
        saved, earlier, late = [], [], []  # late: a stop that came once the bundle was in place

        def save():
            # What the save replaces, read just before it, under the run folder's lock (the history's renames and
            # this save hold it): read before the lock, a run saving to this run_name meanwhile (a papermill sweep
            # in parallel without -p run_name) was not named, and each run's bundle was replaced without a word.
            earlier.append(saved_before(dest))
            committed, undecided = [], []
            try:
                saved.append(save_bundle(trained, dest, data=data, on_commit=lambda where: committed.append(where)
                                         or note_written(), on_undecided=lambda: undecided.append(dest)))
            except KeyboardInterrupt as stop:
                if undecided:  # (the history is put back: the bundle S3 may still put in place is not its)
                    note_what_a_stop_left(stop, f"{undecided_line(dest)}, beside the earlier history")
                if not committed:
                    raise
                # The bundle is in place (the stop came as its staging folder went, or the replaced one's files): its
                # history stays with it, the stop raised once the history's write is done. Raised here, the history
                # was put back beside the new bundle.
                saved.append(committed[0])
                late.append(stop)
                note_written()  # (a stop in on_commit itself, before it said so)

        # (its held-out columns named as the plot names its line: test_, or validation_ for a search's model)
        contents = dict(zip((HISTORY_TABLE, HISTORY_PLOT), (
            trained.history_frame(trained.held_out_score.split).to_csv().encode("utf-8"), png_bytes(fig, dpi))))
        kept = []  # (copy, name, bundle) of another bundle's file this save replaces, kept aside before it is
        naming = _naming_bucket(folder, dest)
        try:
            self._keep_aside(folder, dest, key_path(run_name, "run_name"),
                             [HISTORY_RECORD, *([AUTOTUNE_RECORD] if searched else [])], kept, naming)
            # the records name the copies too, each of its bundle: that bundle's next save removes them (a file of
            # yours named as a record: nothing saved, the copies removed below); the history's, the naming bucket
            record = HISTORY_RECORD.updated(folder, contents, "nothing saved", of=dest, copies=kept, bucket=naming)
            if searched:
                searched[AUTOTUNE_RECORD.name] = AUTOTUNE_RECORD.updated(folder, search_files, "nothing saved",
                                                                         of=dest, copies=kept)
            # on_written: called once all files are in place; where it fails, the files they replaced are put back
            # (the new ones where there were none removed)
            with storage.atomic_writes(paths, overwrite_as=storage.OVERWRITE_ARGUMENT, on_written=save) as files:
                for f, content in zip(files, [*contents.values(), record, *searched.values()]):
                    f.write(content)
            if late:
                raise late[0]
        except BaseException:
            # (a stop once the bundle is saved, its files in place, the write ending: each copy is the other bundle's
            # only one)
            for copy, _, _ in ([] if saved else kept):  # (the files they copy are back in place: nothing to keep)
                copy.unlink(missing_ok=True)
            if saved:  # (the copies stay: said before the stop's line, which spoke only of the save)
                self._say_kept(kept, run_name, dest)
            raise
        if earlier[0] is not None:  # (said before 04's files of it are removed, below)
            print(f"replaced the earlier bundle at {dest} ({earlier[0]}); to keep both next time, give each run its own "
                  f"name: -p run_name NAME", file=sys.stderr)
        self._say_kept(kept, run_name, dest)
        # a search staged for another model (a Stop after the search: the cell kept the model before) is not this one's
        stale_search = self._staged_autotune.pop(folder, None) is not None and not searched
        removals = [(self._remove_older_copies, "the copies kept aside of the replaced model's files"),
                    (self.remove_inference, "04's files of the model replaced")]
        if folder in self._dropping_autotune or stale_search:  # (the model they were of is replaced now)
            self._dropping_autotune.discard(folder)
            removals.insert(1, (self.remove_autotune, "an earlier autotune run's files"))
        for remove, what in removals:
            try:
                remove(run_name)
            except OSError as exc:  # the model is saved: what is left is said, not the cell's error
                print(f"warning: {what} in {self.show(key_path(run_name, 'run_name'))} were left: {exc}",
                      file=sys.stderr)
        return saved[0]

    def _say_kept(self, kept, run_name, dest):
        """One line on stderr for each bundle whose files :meth:`_keep_aside` kept (``kept``) as this save replaced
        them: where they are (two bundles only from an edited record)."""
        for of in dict.fromkeys(of for _, _, of in kept):
            copies, names = zip(*((copy.name, name) for copy, name, whose in kept if whose == of))
            # (printable: "of" is the record's, which may hold JSON's "\ud800", edited by hand)
            print(printable(f"kept {' and '.join(copies)} in {self.show(key_path(run_name, 'run_name'))}: "
                            f"{' and '.join(names)} of {of}, replaced by this save of {dest} (the folder is run_name "
                            f"{run_name!r}'s for every bucket and prefix)"), file=sys.stderr)

    def _remove_older_copies(self, run_name):
        """The copies :meth:`_keep_aside` made of the files of this run's bundle (``history.exp1.csv``, kept when exp2's
        save replaced exp1's history), now that a save of that bundle has replaced it: removed, as their records name
        them (:meth:`~fasttext_lib.written_record.WrittenRecord.remove_copies`), each only while it holds what was
        kept; one changed since stays, and so does a file of such a name no record names (yours; or kept before the
        copies were recorded), each said in one line, that one only the first time (the record notes it: said again
        at every save of the bundle, it was noise). Such names are the bundle's as the folder's naming bucket names it
        (:func:`_naming_bucket`: ``history.exp1.csv`` in its own, ``history.BUCKET-exp1~3f0c1e.csv`` in another), or
        as a save in any other bucket did (from before the folder had one). Said only, they stayed for
        good, an older history of the bundle beside the newer one. Copies of another bundle's files stay, unsaid."""
        dest, folder, shown = self.model(run_name), self.run_folder(run_name), self.show(key_path(run_name, "run_name"))
        whoses = {_whose(dest, key_path(run_name, "run_name"), bucket)
                  for bucket in (_naming_bucket(folder, dest), None)}  # (None: a bucket other than any: it is named)
        for record in (HISTORY_RECORD, AUTOTUNE_RECORD):
            recorded = record.read(folder) or {}
            unrecorded = [name for name in _copies_named(folder, record.outputs, whoses) if name not in recorded]
            said = record.said(folder)
            removed, changed = record.remove_copies(folder, dest)
            # (printable: the names are files' in the folder, one of a byte no UTF-8 decodes a lone surrogate)
            if removed:
                print(printable(f"removed {' and '.join(removed)} from {shown}: {record.writer}'s files of {dest} kept "
                                f"aside when another bucket's or prefix's save replaced them, older than this save's"),
                      file=sys.stderr)
            if changed:
                print(printable(f"kept {' and '.join(changed)} in {shown}: {record.writer}'s files of {dest} kept "
                                f"aside, changed since"), file=sys.stderr)
            unsaid = [name for name in unrecorded if name not in said]
            if unsaid:
                print(printable(f"note: kept {' and '.join(unsaid)} in {shown}: named as {record.writer}'s files of "
                                f"{dest} kept aside, but not recorded as kept (yours?): not removed"), file=sys.stderr)
            record.note_said(folder, unrecorded)

    def _keep_aside(self, folder, dest, run_name, records, kept, naming):
        """Copies of the files in ``folder`` that :meth:`save_run` replaces (the history; a search's plot and table)
        that their ``records`` say are of another bundle than ``dest`` (of the same run_name in another bucket or
        prefix: the folder is one for all of them), beside them under names that say whose (written_record.kept_name,
        as named in the folder's ``naming`` bucket: :func:`_naming_bucket`), for save_run to keep once it has replaced
        them (and remove where the save fails): ``(copy, name, bundle)`` of each added to ``kept`` as it is made. A
        file of no record, or of an older one that names no bundle (written before bundles were recorded), is replaced
        as before: nothing tells whose it is."""
        for name, entry in ((n, e) for record in records for n, e in (record.read(folder) or {}).items()
                            if n in record.outputs):  # (not the copies it names)
            of = entry.get("of")
            if of is None or of == dest or not (folder / name).is_file():
                continue
            whose = _whose(of, run_name, naming)
            for n in itertools.count(1):
                copy = folder / kept_name(name, whose, n)
                try:
                    with open(folder / name, "rb") as source, open(copy, "xb") as target:
                        kept.append((copy, name, of))
                        shutil.copyfileobj(source, target)
                    break
                except FileExistsError:
                    continue
                except OSError as exc:  # (a full disk): nothing saved, and save_run removes the copies made
                    raise FastTextError(f"nothing saved: cannot keep {name} of {of} as {copy.name} in {folder}: "
                                        f"{exc.strerror or exc}") from None

    def save_predictions(self, predictions, run_name):
        """Notebook 04's predictions table (a DataFrame) as ``04_predictions.csv`` in :meth:`run_folder`, written
        whole or not at all: a plain ``to_csv`` stopped part way (the Stop button, a full disk) left a truncated table
        in place of the earlier one. Recorded as 04's (:meth:`remove_inference`). Returns its path."""
        return inference_files.write_predictions(self.run_folder(run_name), predictions, of=self.model(run_name))

    def save_confusion_matrix(self, fig, run_name, dpi=100):
        """Notebook 04's confusion matrix (``fig``) as ``04_confusion_matrix.png`` in :meth:`run_folder`, written
        whole, recorded as 04's. Returns its path."""
        return inference_files.write_figure(self.run_folder(run_name), fig, dpi=dpi, of=self.model(run_name))

    @telling_stops(lambda self, predictor, run_name, *_, **__: f"stopped by the user while writing the word vectors to "
                   f"{self._shown_vectors(run_name)}; the earlier file there, if any, is as it was; run the cell again "
                   f"to write them",
                   done=lambda self, predictor, run_name, *_, **__: f"stopped by the user once the word vectors were "
                   f"written to {self._shown_vectors(run_name)}")  # (a Stop: one line in a notebook)
    def save_word_vectors(self, predictor, run_name):
        """Notebook 04's export of ``predictor``'s word vectors as ``04_word_vectors.vec`` in :meth:`run_folder`,
        written whole, recorded as 04's. Returns the number of words."""
        return inference_files.write_vectors(self.run_folder(run_name), predictor, of=self.model(run_name))

    def _shown_vectors(self, run_name):
        return self.show(f"{key_path(run_name, 'run_name')}/{inference_files.VECTORS_FILE}")

    def remove_inference(self, run_name):
        """Remove notebook 04's files (predictions, confusion matrix, word vectors) from :meth:`run_folder` now:
        :meth:`save_run` calls it once a new bundle of ``run_name`` is saved, as they were of the one it replaced. Only
        the files 04's record says it wrote there (name, size, sha256), each only while it holds what 04 wrote: a
        file of yours under one of the names stays, and so does one of 04's you changed since (said in one line on
        stderr). Known by content, a table of yours with 04's columns, or any ``.vec`` file, was removed. Only those
        of this run's bundle (:meth:`model`, recorded by 04): the folder is one for every bucket and prefix, and those
        of another's bundle stay, said on stderr. Says on stderr what it removed; returns the names."""
        return inference_files.remove_written(self.run_folder(run_name), self.show(key_path(run_name, "run_name")),
                                              of=self.model(run_name))

    def drop_autotune(self, run_name):
        """The autotune outputs of an earlier run of ``run_name`` in its :meth:`run_folder` (a run without autotune),
        removed once :meth:`save_run` has saved this run's model (:meth:`remove_autotune`): left there, a trial table
        and plot of another search sat beside this run's model and history. Removed here, in 02's autotune cell, a
        save that then failed (a denied write, the Stop button during a long upload) left the autotuned model and its
        history in place without its search's files. A search :meth:`autotune` kept for its save is dropped too.
        Returns the names that will go."""
        folder = self.run_folder(run_name)
        self._staged_autotune.pop(folder, None)
        self._dropping_autotune.add(folder)
        return AUTOTUNE_RECORD.unchanged(folder)

    def remove_autotune(self, run_name):
        """Remove the autotune outputs of an earlier run of ``run_name`` from its :meth:`run_folder` now: only those
        the search's record (:data:`AUTOTUNE_RECORD`, written with them) says the library wrote there, each only while
        it holds what was written, then the record. A file of yours under either name stays, and so does one of the
        search's you changed since (said in one line on stderr), a link or a folder. Known by content (the trial
        table's header, the plot's mark), a table of yours with those columns or a copy of an earlier plot was
        removed. Files of a search saved before the record was kept (no record) stay too: they could be told from
        yours only by their content. Says on stderr what it removed; returns the names."""
        shown = self.show(key_path(run_name, "run_name"))
        # (only those of the bundle replaced: another bucket's or prefix's of this run_name stay, said in one line)
        return AUTOTUNE_RECORD.remove_unchanged(self.run_folder(run_name), shown, lambda removed: print(
            f"removed {' and '.join(removed)} from {shown}: an earlier autotune run's, not this model's",
            file=sys.stderr), of=self.model(run_name))

    def __repr__(self):
        return f"Workspace(s3: {self.base}, local: {os.path.relpath(self._out)})"


def _whose(bundle, run_name, bucket):
    """What names the bundle ``s3://B/PREFIX/models/RUN_NAME`` among run_name's in the workspace's ``bucket``
    (written_record.whose_part): its prefix, ``exp1``, where that is one folder in ``bucket``; else its prefix's folders
    (``runs/a``: ``runs-a``; ``runs\\a`` too: a copy's name is one in the folder itself, which a backslash, Windows'
    separator, is not to written_record.is_kept_name, so such a copy was never removed), after its bucket where that is
    another (``B-exp1``), or its bucket alone where it has no prefix, with a hash of the bundle after them
    (``runs-a~3f0c1e``): joined by ``-``, they were the name of other prefixes too (``runs-a``'s). Shortened where long
    (:func:`_fitting`)."""
    if not _could_be_a_bundle(bundle):  # (a record edited by hand: kept under a name of no bundle; the save goes on)
        return whose_part("other", bundle)
    other, key = storage.split_s3(bundle)
    prefix = key[:-len(f"models/{run_name}")].strip("/")
    parts = prefix.replace("\\", "/").split("/")
    if other == bucket and prefix and len(parts) == 1:
        return whose_part(_fitting(prefix))
    return whose_part(_fitting("-".join(part for part in [other if other != bucket else "", *parts] if part) or other,
                               _WHOSE_BYTES - len(whose_part("", bundle))), bundle)


def _naming_bucket(folder, bundle):
    """The bucket whose one-folder prefixes name their copies in the run ``folder`` by the prefix alone (_whose): the
    one its history's record holds (written_record.WrittenRecord.bucket), or where there is no record yet that of
    ``bundle`` (the save's, which the record then holds); None (every bucket's named with it) where an earlier
    version's record holds none. One for the folder: each save naming them as in its own bucket, bucket A's prefix
    exp1 and bucket B's both named their copies history.exp1.csv, one output_dir for both."""
    return HISTORY_RECORD.bucket(folder, first=storage.split_s3(bundle)[0])


def _could_be_a_bundle(bundle):
    """Whether ``bundle`` (a record's "of", edited by hand maybe) could name a bundle: an s3:// URI, in text UTF-8
    holds, of no NUL, of a bucket of no backslash (no bucket has one). Taken for one, a lone surrogate (JSON's
    "\\ud800") raised UnicodeEncodeError out of the save (_fitting), a NUL named the copy kept aside with a NUL
    (ValueError), and a backslash in the bucket named it as no copy is named (is_kept_name): kept, never removed."""
    try:
        bundle.encode("utf-8")
        bucket = storage.split_s3(bundle)[0]
    except (UnicodeEncodeError, FastTextError):
        return False
    return "\0" not in bundle and "\\" not in bucket


# The most bytes of _whose's name: a prefix may have 1,024, a file name 255 (a longer copy's name failed the save).
_WHOSE_BYTES = 120


def _fitting(whose, most=_WHOSE_BYTES):
    """``whose``, or where it is longer than ``most`` bytes, its start and a hash of the whole (two long prefixes that
    begin alike keep apart)."""
    data = whose.encode("utf-8")
    if len(data) <= most:
        return whose
    digest = hashlib.sha256(data).hexdigest()[:12]
    return f"{data[:most - len(digest) - 1].decode('utf-8', 'ignore')}-{digest}"


def _changed(then, now):
    """Whether a dataset's data at S3 (Workspace._data_now) is another write's ``now`` than ``then``: an object known
    both times (neither missing nor unreadable) that is not the same. One not known either time tells nothing: a HEAD
    refused or failing as the files are saved (credentials expired since the write cell, a lost endpoint) said that
    another run had written the data, and the histogram of this run's data was not written."""
    return any(a is not None and b is not None and a != b for a, b in zip(then, now))


def _copies_named(folder, outputs, whoses):
    """The names in ``folder`` of copies of ``outputs`` kept aside as any of ``whoses``'s (written_record.is_kept_name:
    ``history.exp1.csv``, ``history.exp1-2.csv`` where that name was taken)."""
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    return [name for name in names if any(is_kept_name(name, output, whose) for output in outputs for whose in whoses)]


def _is_a_uri(output_dir):
    """Whether ``output_dir`` is an ``s3://`` URI, or a location of another scheme (``gs://``) or an S3 URI mistyped
    (``S3://``, ``s3:/``): storage.is_s3 refuses those as paths."""
    try:
        return storage.is_s3(str(output_dir))
    except FastTextError:
        return True
