"""Download the Zhang et al. (2015) text classification datasets and turn them into fastText files.

Downloads are large (up to 690 MB), so they are resumable (an interrupted ``<file>.part`` is continued with an HTTP
``Range`` request: download_fetch.py), verified against the published size and md5 before use, and cached: a
verified archive is never fetched twice (download_cache.py). A transient failure (a busy server, a lost connection) is
retried within the run, resuming the ``.part`` (download_retry.py). The datasets' table is zhang_datasets.py
(``DATASETS`` is importable from here too), their splits are read by zhang_splits.py.
"""
import contextlib
import errno
import os

from . import label_names, storage, zhang_splits
from .data import check_limit
from .download_cache import (CacheReadError, bytes_held, cache_lock, fail_verification, is_a_file,
                             refuse_a_file_as_the_cache, refuse_a_folder, remove_if_there, why_not_verified)
from .download_fetch import fetch
from .download_retry import attempts_allowed, retried
from .errors import FastTextError, refuse_standard_output
from .stops import note_what_a_stop_cleaned_up, note_what_a_stop_kept, telling_stops
from .writers import check_fasttext_labels, write_fasttext_rows
from .zhang_datasets import DATASETS, SPLITS, ZhangDataset, archive_url, dataset_label_names, get_dataset

__all__ = ["DATASETS", "SPLITS", "ZhangDataset", "dataset_label_names", "download", "get_dataset", "prepare"]


def download(name_or_spec, cache_dir, base_url=None, progress=True):
    """Download a dataset archive into ``cache_dir`` (resuming, verifying); return its local path.

    ``base_url`` replaces everything before the file name (a mirror or a local test server). Another download into
    the same cache (a second notebook, the command line) is waited for (:func:`cache_lock`), then its archive used.
    A transient failure (a busy server, a lost connection) is retried, the .part resumed each time
    (download_retry.py). ``~`` in ``cache_dir`` or a local ``base_url``: the home folder.
    """
    cache_dir, base_url = _cache_and_mirror(cache_dir, base_url)
    return _download(get_dataset(name_or_spec), cache_dir, base_url, progress)


def _cache_and_mirror(cache_dir, base_url):
    """``cache_dir`` and ``base_url`` as :func:`download` and :func:`prepare` take them: ``~`` is the home folder (as
    the readers read it), and ``-`` is no cache folder."""
    cache_dir, base_url = storage.expand_home(cache_dir), storage.expand_home(base_url)
    refuse_standard_output(cache_dir, "cache_dir", "the downloaded archive", "a directory")
    return cache_dir, base_url


def _download(spec, cache_dir, base_url, progress):
    """:func:`download` of ``spec``, its other arguments taken as :func:`_cache_and_mirror` gives them."""
    attempts = attempts_allowed()
    url = archive_url(spec, base_url)
    path = os.path.join(cache_dir, spec.filename)
    part = path + ".part"
    refuse_a_file_as_the_cache(cache_dir)
    try:
        os.makedirs(cache_dir, exist_ok=True)
        with cache_lock(cache_dir, progress):
            refuse_a_folder(path, "the archive")  # (before the download: os.replace would refuse it only after)
            if os.path.exists(path):
                if why_not_verified(path, spec) is None:
                    return path
                remove_if_there(path)  # corrupt or from another version: fetch again
            retried(lambda: fetch(url, part, spec, progress), url, attempts, lambda: bytes_held(part))
            wrong = why_not_verified(part, spec)
            if wrong:
                fail_verification(part, url, wrong)
            os.replace(part, path)  # only a verified archive ever carries the final name
    except KeyboardInterrupt as exc:  # (Ctrl-C, SIGTERM: its line said "stopped and cleaned up", and a user deleted
        if is_a_file(part):  # the .part of hundreds of MB, or thought the download had to start over)
            note_what_a_stop_kept(exc, f"the partial download {part} is kept: a rerun resumes it")
        raise
    except CacheReadError as exc:  # (an archive another user cached, which this one may not read; a failing disk)
        raise _unreadable(exc, cache_dir) from None
    except OSError as exc:  # the cache itself: a full disk, a file in the way (fetch handles the server's errors)
        kept = " (the partial download is kept: run again to resume)" if is_a_file(part) else ""
        raise FastTextError(f"cannot write the download cache {cache_dir}: "
                            f"{storage.why_not_written(cache_dir, exc)}{kept}") from None
    return path


def _unreadable(exc, cache_dir):
    """The error of ``exc``, a :class:`CacheReadError` of the cache folder ``cache_dir`` or a file in it: what could
    not be read, why, and what to do (nothing in the cache was changed)."""
    what = (f"the download cache {cache_dir} (it is opened to lock it against another download into it at once)"
            if exc.filename == cache_dir else f"{exc.filename} in the download cache")
    todo = ("make it readable to this user (or ask its owner to)" if exc.errno in (errno.EACCES, errno.EPERM)
            else "check the disk it is on")
    return FastTextError(f"cannot read {what}: {exc.strerror}; {todo}, or choose another cache folder")


# What a rerun of prepare is told when a file it would replace holds something else (_hints)
_DIFFERS = "it differs from what prepare writes (edited since, or prepared with another limit or archive)"


def _hints(overwrite_as):
    """``(differs, unreadable)``: what a rerun of prepare is told to do where a file it would replace holds something
    else (after :data:`_DIFFERS`), and where such a file on S3 cannot be told the same as what it writes
    (storage.check_comparable), as its caller's user says it: ``overwrite_as`` is prepare's argument (which notebook
    01 passes its parameter overwrite as) or the command line's flag (storage.OVERWRITE_FLAG: its flags then), as
    class_folders names its options by it."""
    replace = storage.replace_with(overwrite_as)
    elsewhere = ("choose another --output" if overwrite_as == storage.OVERWRITE_FLAG
                 else "prepare the dataset in another folder or S3 prefix")
    return f"{_DIFFERS}: {replace}, or {elsewhere}", f"{replace}, or grant that permission"


def _refuse_what_differs(outputs, hint, unreadable_hint):
    """Refuse (one line naming it, then ``hint``) the first of ``outputs`` (``{uri: storage.Written}``) whose uri
    holds something other than what was written for it: a names file the user edited, splits of another ``limit``
    (one on S3 that cannot be told so: ``unreadable_hint``). Byte for byte the same is no loss: a rerun (notebook 01
    on every run) succeeds."""
    for uri, written in outputs.items():
        if storage.would_replace(uri) and not storage.holds(uri, written, unreadable_hint):
            raise storage.already_exists(uri, hint)


def _output_uris(spec, out_dir_or_s3_prefix, names=True):
    """Where prepare writes ``spec``'s files, as it returns them: ``{"train": uri, "test": uri}``, then
    ``"label_names": uri`` where it writes a names file (``names``: the classes' names are known)."""
    uris = {split: storage.join(out_dir_or_s3_prefix, f"{spec.name}.{split}") for split in SPLITS}
    if names:
        uris["label_names"] = storage.join(out_dir_or_s3_prefix, spec.name + label_names.SUFFIX)
    return uris


def _names_first(uris):
    """The uris of ``uris`` (:func:`_output_uris`) in the order they are put in place: the names file first, so that
    a .train is never left without the names that reading it finds beside it (label_names.py)."""
    return [uris[key] for key in ("label_names", *SPLITS) if key in uris]


@telling_stops(lambda name, out_dir_or_s3_prefix, *_, **__: f"stopped by the user while preparing {name} in "
               f"{out_dir_or_s3_prefix}; run the cell again to prepare it")  # (a Stop: one line in a notebook)
def prepare(name, out_dir_or_s3_prefix, cache_dir, base_url=None, limit=None, progress=True, on_written=None,
            overwrite=False, overwrite_as=storage.OVERWRITE_ARGUMENT):
    """Download ``name`` and write normalized fastText files ``<name>.train`` / ``<name>.test``.

    The output goes to a local directory or an ``s3://`` prefix, each split in a seeded random order as
    fastText's script writes them (:func:`zhang_splits.shuffled`); ``limit`` caps the documents per split (quick
    experiments): a sample spread over the whole split, the same every run (:func:`zhang_splits.spread_sample`).
    When the classes' meanings are known (:func:`dataset_label_names`), ``<name>.classes.txt`` (``id=name`` lines)
    is written first, beside them: training on ``<name>.train`` then stores the names in the bundle
    (label_names.py). Returns
    ``{"train": uri, "test": uri}`` and ``"label_names": uri`` when that file was written. ``on_written``: called
    with that once the files are in place (an error it raises puts the old local ones back), after S3 uploads
    (storage.atomic_writes' on_written).

    Files already there are kept unless ``overwrite``: where one holds other bytes than this run would write (a
    ``.classes.txt`` the user edited, splits of another ``limit``), nothing is written and the error names it, and
    what to do. A run that writes the same bytes again succeeds (a notebook rerun), and leaves those files as they
    are: whether they are the same is known only once they are prepared, so each is compared as it is written, before
    anything is put in place, and again as the files are put in place (a file another run put there meanwhile, or one
    changed since: storage.atomic_writes' ``if_taken``). On S3 a HEAD tells (storage.holds: the ETag); an object it
    cannot tell and that may not be read is refused before the download (storage.check_comparable). What to do is
    said as ``overwrite_as`` says to replace (these arguments; the command line passes its flag,
    storage.OVERWRITE_FLAG, and is told its flags). ``~`` in a local path: the home folder. A stop (Ctrl-C, SIGTERM)
    once the archive is verified keeps it in the cache for a rerun, and its line says so, and which files' writes it
    cleaned up (_archive_kept_on_a_stop).
    """
    out_dir_or_s3_prefix = storage.expand_home(out_dir_or_s3_prefix)  # (~: the home folder's, as the readers read it)
    refuse_standard_output(out_dir_or_s3_prefix, "out_dir_or_s3_prefix", "the dataset", "a directory")
    cache_dir, base_url = _cache_and_mirror(cache_dir, base_url)
    spec = get_dataset(name)
    check_limit(limit)  # before a download of up to ~1.5 GB
    # and the output, before it too: a missing bucket or an unwritable folder was found after the download and
    # the normalization of every review (minutes for Yelp; notebook 01 with a wrong bucket)
    storage.check_writable(out_dir_or_s3_prefix)
    hint, unreadable_hint = _hints(overwrite_as)
    if not overwrite:  # and files there that could be told the same only once written, and then not at all
        for uri in _names_first(_output_uris(spec, out_dir_or_s3_prefix)):
            storage.check_comparable(uri, unreadable_hint)
    archive = _download(spec, cache_dir, base_url, progress)
    with _archive_kept_on_a_stop(archive), storage.staging_dir() as tmp:
        csvs = zhang_splits.extract_splits(archive, f"{spec.name}_csv", tmp)
        names = dataset_label_names(spec, csvs.get("classes"))
        uris = _output_uris(spec, out_dir_or_s3_prefix, names=bool(names))
        placed = _names_first(uris)
        outputs = {}  # uri -> storage.Written: the bytes this run writes there, compared with what is there

        def refuse_what_differs(*checked):  # (of the uris ``checked``: _refuse_what_differs)
            _refuse_what_differs({uri: outputs[uri] for uri in checked}, hint, unreadable_hint)

        # All files are written in full before any replaces an older one: a failure in the second split (a full
        # disk, a label fastText's format cannot hold) left a new .train beside an old .test, and a names file the
        # user had edited replaced. Without overwrite, files of the same bytes as this run's stay as they are,
        # others are refused (refuse_what_differs, and again as the files are put in place: a file another run
        # put there meanwhile, or one changed since it was compared); where none is there, none is ever replaced
        # (a link, S3's conditional PUT).
        with storage.atomic_writes(placed, overwrite=overwrite, if_taken=None if overwrite else refuse_what_differs,
                                   on_written=on_written and (lambda: on_written(uris)),
                                   overwrite_as=overwrite_as) as files, _cleaned_up_on_a_stop(placed):
            outputs.update((uri, storage.Written(f, s3=storage.is_s3(uri))) for uri, f in zip(placed, files))
            if names:
                outputs[uris["label_names"]].write("".join(f"{k}={v}\n" for k, v in names.items()).encode("utf-8"))
                if not overwrite:  # at once: an edited names file is refused before minutes of normalizing
                    refuse_what_differs(uris["label_names"])
            _write_splits(spec, archive, csvs, limit, uris, outputs)
            if not overwrite:  # all again, in uris' order: the names file last, the one a user edits, looked at
                refuse_what_differs(*uris.values())  # just before all are put in place (the least time unseen)
    return uris


@contextlib.contextmanager
def _archive_kept_on_a_stop(archive):
    """A stop (Ctrl-C, SIGTERM) once ``archive`` is verified in the cache says it is kept there, and that a rerun uses
    it: "stopped and cleaned up" alone had the user think the download (the expensive part: up to 690 MB) was lost,
    or delete it to clean up. (A stop during the download says what it keeps itself: _download.)"""
    try:
        yield
    except KeyboardInterrupt as exc:
        note_what_a_stop_kept(exc, f"the downloaded archive {archive} is kept in the cache: a rerun does not "
                                   f"download it again")
        raise


@contextlib.contextmanager
def _cleaned_up_on_a_stop(placed):
    """A stop while the files ``placed`` are written (before any is put in place: storage.atomic_writes cleans their
    writes up, what was there stays as it was) names them in its line (stops.note_what_a_stop_cleaned_up)."""
    try:
        yield
    except KeyboardInterrupt as exc:
        note_what_a_stop_cleaned_up(exc, placed)
        raise


def _write_splits(spec, archive, csvs, limit, uris, outputs):
    """Write each split of ``archive`` (its CSVs extracted: ``csvs``) as fastText rows to ``outputs[uris[split]]``,
    one split in memory at a time; ``limit``: :func:`prepare`'s."""
    for split in SPLITS:
        data, rows = zhang_splits.read_split(csvs[split], f"{archive}:{spec.name}_csv/{split}.csv", limit)
        check_fasttext_labels(data, uris[split])
        # (its errors name the document by its row in the archive's CSV)
        write_fasttext_rows(data, outputs[uris[split]], uris[split], order=zhang_splits.shuffled(len(data)),
                            numbers=rows)
        del data  # one split in memory at a time
