"""Download the Zhang et al. (2015) text classification datasets and turn them into fastText files.

Downloads are large (up to 690 MB), so they are resumable (an interrupted ``<file>.part`` is continued with an HTTP
``Range`` request: download_fetch.py), verified against the published size and md5 before use, and cached: a
verified archive is never fetched twice (download_cache.py). A transient failure (a busy server, a lost connection) is
retried within the run, resuming the ``.part`` (download_retry.py). The datasets' table is zhang_datasets.py
(``DATASETS`` is importable from here too), their splits are read by zhang_splits.py.
"""
import os

from . import label_names, storage, zhang_splits
from .data import check_limit
from .download_cache import (CacheReadError, cache_lock, fail_verification, is_a_file, md5_of, refuse_a_folder,
                             remove_if_there, verified)
from .download_fetch import fetch
from .download_retry import attempts_allowed, retried
from .errors import FastTextError, refuse_standard_output
from .stops import note_what_a_stop_left
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
    cache_dir, base_url = storage.expand_home(cache_dir), storage.expand_home(base_url)  # (~: the home folder's, as the readers read it)
    refuse_standard_output(cache_dir, "cache_dir", "the downloaded archive", "a directory")
    spec = get_dataset(name_or_spec)
    attempts = attempts_allowed()
    url = archive_url(spec, base_url)
    path = os.path.join(cache_dir, spec.filename)
    part = path + ".part"
    try:
        os.makedirs(cache_dir, exist_ok=True)
        with cache_lock(cache_dir, progress):
            refuse_a_folder(path, "the archive")  # (before the download: os.replace would refuse it only after)
            if os.path.exists(path):
                if verified(path, spec):
                    return path
                remove_if_there(path)  # corrupt or from another version: fetch again
            retried(lambda: fetch(url, part, spec, progress), url, attempts, lambda: _size_of(part))
            size = os.path.getsize(part)
            if size != spec.size:
                fail_verification(part, url, f"{size} bytes, expected {spec.size}")
            md5 = md5_of(part)
            if md5 != spec.md5:
                fail_verification(part, url, f"md5 {md5}, expected {spec.md5}")
            os.replace(part, path)  # only a verified archive ever carries the final name
    except KeyboardInterrupt as exc:  # (Ctrl-C, SIGTERM: its line said "stopped and cleaned up", and a user deleted
        if is_a_file(part):  # the .part of hundreds of MB, or thought the download had to start over)
            note_what_a_stop_left(exc, f"the partial download {part} is kept: a rerun resumes it")
        raise
    except CacheReadError as exc:  # (an archive another user cached, which this one may not read)
        raise FastTextError(f"cannot read {exc.filename} in the download cache: {exc.strerror}") from None
    except OSError as exc:  # the cache itself: a full disk, a file in the way (fetch handles the server's errors)
        kept = " (the partial download is kept: run again to resume)" if is_a_file(part) else ""
        raise FastTextError(f"cannot write the download cache {cache_dir}: "
                            f"{storage.why_not_written(cache_dir, exc)}{kept}") from None
    return path


# What a rerun of prepare is told when a file it would replace holds something else: what to do, as its caller gives
# it (prepare's arguments, which notebook 01 passes its parameter overwrite as; the command line's flags: cli).
DIFFERS = "it differs from what prepare writes (edited since, or prepared with another limit or archive)"
DIFFERS_HINT = f"{DIFFERS}: pass overwrite=True to replace it, or prepare the dataset in another folder or S3 prefix"
DIFFERS_FLAG_HINT = f"{DIFFERS}: pass --overwrite to replace it, or choose another --output"
# What it is told when such a file on S3 cannot be told the same as what it writes (storage.check_comparable), so too
UNREADABLE_HINT = "pass overwrite=True to replace it, or grant that permission"
UNREADABLE_FLAG_HINT = "pass --overwrite to replace it, or grant that permission"
# How it is told to replace where its S3 writes are refused without overwrite (a file created meanwhile by another
# run, a store that can neither write conditionally nor say what is missing, a set left mixed: storage.atomic_writes')
OVERWRITE_ARGUMENT = storage.OVERWRITE_ARGUMENT


def _refuse_what_differs(outputs, hint, unreadable_hint):
    """Refuse (one line naming it, then ``hint``) the first of ``outputs`` (``{uri: storage.Written}``) whose uri
    holds something other than what was written for it: a names file the user edited, splits of another ``limit``
    (one on S3 that cannot be told so: ``unreadable_hint``). Byte for byte the same is no loss: a rerun (notebook 01
    on every run) succeeds."""
    for uri, written in outputs.items():
        if storage.would_replace(uri) and not storage.holds(uri, written, unreadable_hint):
            raise storage.already_exists(uri, hint)


def prepare(name, out_dir_or_s3_prefix, cache_dir, base_url=None, limit=None, progress=True, on_written=None,
            overwrite=False, hint=DIFFERS_HINT, unreadable_hint=UNREADABLE_HINT, overwrite_as=OVERWRITE_ARGUMENT):
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
    what to do (``hint``: as these arguments; the command line passes its flags, :data:`DIFFERS_FLAG_HINT`). A run
    that writes the same bytes again succeeds (a notebook rerun), and leaves those files as they are: whether they
    are the same is known only once they are prepared, so each is compared as it is written, before anything is put
    in place, and again as the files are put in place (a file another run put there meanwhile, or one changed since:
    storage.atomic_writes' ``if_taken``). On S3 a HEAD tells (storage.holds: the ETag); an object it cannot tell
    and that may not be read is refused before the download (storage.check_comparable), ending in
    ``unreadable_hint`` (the command line's: :data:`UNREADABLE_FLAG_HINT`). Its other refusals on S3 say how to
    replace as ``overwrite_as`` (the command line's: storage.OVERWRITE_FLAG). ``~`` in a local path: the home folder.
    """
    out_dir_or_s3_prefix, cache_dir, base_url = (storage.expand_home(path) for path in  # (~: the home folder's, as
                                                 (out_dir_or_s3_prefix, cache_dir, base_url))  # the readers read it)
    refuse_standard_output(out_dir_or_s3_prefix, "out_dir_or_s3_prefix", "the dataset", "a directory")
    refuse_standard_output(cache_dir, "cache_dir", "the downloaded archive", "a directory")
    spec = get_dataset(name)
    check_limit(limit)  # before a download of up to ~1.5 GB
    # and the output, before it too: a missing bucket or an unwritable folder was found after the download and
    # the normalization of every review (minutes for Yelp; notebook 01 with a wrong bucket)
    storage.check_writable(out_dir_or_s3_prefix)
    if not overwrite:  # and files there that could be told the same only once written, and then not at all
        for name in [spec.name + label_names.SUFFIX] + [f"{spec.name}.{split}" for split in SPLITS]:
            storage.check_comparable(storage.join(out_dir_or_s3_prefix, name), unreadable_hint)
    archive = download(spec, cache_dir, base_url=base_url, progress=progress)
    with storage.staging_dir() as tmp:
        csvs = zhang_splits.extract_splits(archive, f"{spec.name}_csv", tmp)
        names = dataset_label_names(spec, csvs.get("classes"))
        names_uri = storage.join(out_dir_or_s3_prefix, spec.name + label_names.SUFFIX) if names else None
        # All files are written in full before any replaces an older one: a failure in the second split (a full
        # disk, a label fastText's format cannot hold) left a new .train beside an old .test, and a names file the
        # user had edited replaced. The names file is put in place first: a .train without it is never left behind.
        written = {split: storage.join(out_dir_or_s3_prefix, f"{spec.name}.{split}") for split in SPLITS}
        uris = ([names_uri] if names else []) + [written[split] for split in SPLITS]
        if names:
            written["label_names"] = names_uri
        # Without overwrite, files of the same bytes as this run's stay as they are, others are refused
        # (_refuse_what_differs, and again as the files are put in place: a file another run put there meanwhile,
        # or one changed since it was compared); where none is there, none is ever replaced (a link, S3's
        # conditional PUT).
        with storage.atomic_writes(uris, overwrite=overwrite, if_taken=None if overwrite else (
                lambda uri: _refuse_what_differs({uri: outputs[uri]}, hint, unreadable_hint)),
                on_written=on_written and (lambda: on_written(written)), overwrite_as=overwrite_as) as files:
            outputs = {uri: storage.Written(f, s3=storage.is_s3(uri)) for uri, f in zip(uris, files)}
            if names:
                outputs[names_uri].write("".join(f"{k}={v}\n" for k, v in names.items()).encode("utf-8"))
                if not overwrite:  # at once: an edited names file is refused before minutes of normalizing
                    _refuse_what_differs({names_uri: outputs[names_uri]}, hint, unreadable_hint)
            for split in SPLITS:
                data, rows = zhang_splits.read_split(csvs[split], f"{archive}:{spec.name}_csv/{split}.csv", limit)
                check_fasttext_labels(data, written[split])
                # (its errors name the document by its row in the archive's CSV)
                write_fasttext_rows(data, outputs[written[split]], written[split],
                                    order=zhang_splits.shuffled(len(data)), numbers=rows)
                del data  # one split in memory at a time
            if not overwrite:  # the names file last: the one a user edits, looked at just before all are put in place
                _refuse_what_differs({uri: outputs[uri] for uri in uris[1:] + uris[:1]} if names else outputs, hint,
                                    unreadable_hint)
    return written


def _size_of(part):
    """The bytes ``part`` holds (0: not there), to see what an attempt gained (fetch itself deals with what is no file)."""
    try:
        return os.stat(part).st_size
    except OSError:
        return 0
