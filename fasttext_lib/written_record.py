"""A record, in a run's local folder, of the files one of the notebooks' steps wrote there: what lets it remove them
later without removing anything else.

Notebook 04's files (inference_files.py) and notebook 02's autotune plot and table (workspace.Workspace) are of one
bundle of a run; once 02 saves another bundle for the run they are stale, and go. Known by their content (a CSV
header, a PNG mark, a ``.vec`` first line), a file of the user's under one of their names was removed too: a table
with the same columns, a copy of an earlier plot. A file is the writer's only by its :class:`WrittenRecord` beside
it (name, size and sha256 of each file, written once the file is in place, or with it as one set of files), and only
while it holds what was written: one changed since is the user's now, and stays, said in one line.

The record carries its writer's mark (``written_by``): a file of the record's name without it (the user's, JSON or
not), or that is not a plain file (a link, to another folder's record say), is never written over (the write that
would record into it is refused in one line), and records nothing.

A save that replaces another bundle's files keeps them aside under names that say whose (``history.exp1.csv``:
:func:`kept_name`, workspace.Workspace.save_run); the record names those copies too, each with the bundle it is of, so
that once that bundle is replaced they go (:meth:`WrittenRecord.remove_copies`), only while they hold what was kept.
Their names are :func:`kept_name`'s, known by :func:`is_kept_name` alone, each of one bundle (:func:`whose_part`; a
prefix of one folder named alone only in the folder's one naming bucket, :meth:`WrittenRecord.bucket`). A
file of such a name that no record names (the user's) stays, said once: the record notes which were said
(:meth:`WrittenRecord.note_said`).

No record, nothing removed: files written before records were kept (by an earlier version of the library), or by
the user, could be told apart only by their content, which is what removed users' files. A stale file left is one
the user can delete; a file of theirs deleted is lost.

The folder is always local (workspace.Workspace.out); the record is written through storage.atomic_write.
"""
import errno
import hashlib
import json
import os
import re
import stat
import sys

from . import storage
from .errors import FastTextError, printable

_HASHED_BLOCK = 1 << 20
_NOT_A_RECORD = object()  # (a file of the record's name, not this writer's record)


class WrittenRecord:
    """The record ``name`` of the files ``writer`` (``"notebook 04"``) writes in a folder, for the names in ``outputs``
    only: a record edited by hand to name another file (history.csv, ../x) removes nothing else."""

    def __init__(self, name, outputs, writer):
        self.name, self.outputs, self.writer = name, tuple(outputs), writer
        self._mark = f"{writer} (fasttext_lib)"

    def is_copy(self, name):
        """Whether ``name`` is that of a copy of one of :attr:`outputs` kept aside (:func:`kept_name`), a file in the
        folder itself (a record edited to name ``history.x/../../y.csv`` names nothing)."""
        return any(is_kept_name(name, output) for output in self.outputs)

    def read(self, folder):
        """{name: {"size", "sha256"}} of the files the record in ``folder`` names, or None: no record, or a file of
        its name that is not this writer's record (nothing is taken for the writer's then, nor removed)."""
        recorded = self._load(folder)
        return None if recorded is _NOT_A_RECORD else recorded

    def check_writable(self, folder, what):
        """The record in ``folder`` ({} where none), or one error where a file of its name is not this writer's record,
        which a write would replace: ``what`` says what is not done then (``"04_predictions.csv not written"``)."""
        recorded = self._load(folder)
        if recorded is _NOT_A_RECORD:
            raise FastTextError(f"{what}: {folder / self.name} is not {self.writer}'s record of the files it wrote "
                                f"(a file of yours?): move it away to write there")
        return recorded or {}

    def updated(self, folder, contents, what, of=None, copies=(), digests=None, bucket=None):
        """The bytes of ``folder``'s record with the files ``contents`` ({name: bytes}) recorded, for a write of those
        files and the record as one set (storage.atomic_writes); refused as :meth:`check_writable` says. ``digests``:
        more such files, by their ``{"size", "sha256"}`` (one written as a stream: 04's vectors). ``of``: what
        they are of (04's: the bundle's URI, for :meth:`remove_unchanged` to keep them for another). ``copies``:
        ``(copy, name, of)`` of the files kept aside as the write replaces them (``copy`` a path in ``folder``, of the
        file ``name``): those of this record's files are recorded as they are now, each of its own ``of``. ``bucket``:
        the folder's naming bucket as the writer read it (:meth:`bucket`: the record's own, or the first save's),
        recorded as it is (None: none)."""
        files = self.check_writable(folder, what)
        digests = {**{name: _digest_of(data) for name, data in contents.items()}, **(digests or {})}
        files.update((name, {**_digest_only(digest), **({"of": of} if of is not None else {})})
                     for name, digest in digests.items())
        files.update((copy.name, {**_digest(copy), "of": whose}) for copy, name, whose in copies if name in self.outputs)
        return self._record_bytes(files, self.said(folder), bucket)

    def bucket(self, folder, first=None):
        """The bucket whose bundles of a one-folder prefix name their copies in ``folder`` by the prefix alone
        (``history.exp1.csv``; workspace._whose), recorded by the first save there (:meth:`updated`); ``first`` (that
        save's bucket) where there is no record yet. One for the folder, not each save's own: bucket A's exp1 and
        bucket B's exp1, each saving there in its own bucket, both named their copies ``history.exp1.csv``, and a save
        of one claimed the other's (in its note of a copy no record names, workspace.Workspace._remove_older_copies).
        None where the record holds none: an earlier version's, whose saves named copies each as in its own bucket, so
        a plain name there may be any bucket's. Taken for the next save's bucket, another bucket's saves named theirs
        plain beside those, and that one's saves claimed them; none, every bundle's copies are named with their
        bucket, and no plain name is taken for any bundle's."""
        record = self._raw(folder)
        if record is None:
            return first
        bucket = record.get("bucket") if isinstance(record, dict) else None
        return bucket if isinstance(bucket, str) and bucket else None

    def said(self, folder):
        """The names of files the record in ``folder`` says were said of already (:meth:`note_said`): none where no
        record, or not this writer's."""
        record = self._raw(folder)
        said = record.get("said") if isinstance(record, dict) else None
        return {name for name in said if isinstance(name, str)} if isinstance(said, list) else set()

    def note_said(self, folder, names):
        """Record that a line was said of each of ``names`` (files of a copy's name no record names: the user's), for it
        to be said once, not at every save; those said before that are gone since are forgotten (one of that name made
        again is said again), and only those: the names of another bundle's copies, said by its save, are not among
        ``names`` (one save's), and forgotten they were said again by each save of the two bundles in turn. Not
        recorded (no record of this writer's there to hold it, or it cannot be written), it is said again, which is all
        that is lost."""
        recorded, said = self._load(folder), self.said(folder)
        kept = {name for name in said if _there(folder / name)}
        if recorded is _NOT_A_RECORD or kept | set(names) == said:
            return
        try:
            self._write(folder, recorded or {}, said=kept | set(names))
        except OSError:
            pass

    def unchanged(self, folder):
        """The names the record in ``folder`` holds that still hold what was written (what :meth:`remove_unchanged`
        would remove now)."""
        recorded = self.read(folder) or {}
        names = []
        for name in (n for n in self.outputs if n in recorded):
            try:
                if _as_written(folder / name, recorded[name]):
                    names.append(name)
            except OSError:  # (unreadable: not known to be as written)
                pass
        return names

    def remove_unchanged(self, folder, shown, say_removed, of=None):
        """Remove the files the record in ``folder`` names that still hold what was written, then the record; a file
        changed since (edited, replaced, a link or folder now) stays, said in one line on stderr (``shown``: the
        folder as printed). ``say_removed(names)``: called where any were removed, also before an error (a file that
        cannot be read or removed), which is raised once the others are done, with the files it left still in the
        record. ``of``: only the files recorded as of it (or of nothing: an older record's) go; one of something else
        stays, said in one line, and stays in the record. Returns the names removed."""
        recorded = self.read(folder)
        if recorded is None:
            return []
        # (copies kept aside stay recorded: they go with the bundle they are of, remove_copies)
        removed, left, error = [], {n: e for n, e in recorded.items() if n not in self.outputs}, None
        for name in (n for n in self.outputs if n in recorded):
            path = folder / name
            try:
                if not _exists(path):
                    continue  # (removed meanwhile: nothing to do)
                if of is not None and recorded[name].get("of", of) != of:
                    left[name] = recorded[name]  # (said below, in one line for each thing they are of)
                    continue
                if not _as_written(path, recorded[name]):
                    print(printable(f"kept {shown}/{name}: changed since {self.writer} wrote it"), file=sys.stderr)
                    continue
                path.unlink()
                removed.append(name)
            except OSError as exc:
                left[name], error = recorded[name], error or exc
        if removed:
            say_removed(removed)
        # (of this record's files only: the copies it names, each of its own bundle, are not what this speaks of)
        others = {n: e["of"] for n, e in left.items() if n in self.outputs and of is not None and e.get("of", of) != of}
        for other in dict.fromkeys(others.values()):
            kept = [name for name, whose in others.items() if whose == other]
            print(printable(f"kept {', '.join(kept)} in {shown}: {self.writer}'s, of {other}, not of {of}"),
                  file=sys.stderr)  # (a record edited by hand: "of" may hold a lone surrogate, JSON's "\ud800")
        self._write(folder, left)  # (none left: the record removed)
        if error is not None:
            raise error
        return removed

    def remove_copies(self, folder, of):
        """Remove the copies the record in ``folder`` names (:meth:`is_copy`) that are of ``of`` (a bundle just replaced:
        kept aside from it, they are an older save's files of it) and still hold what was kept, and take them out of
        the record; one changed since (or no longer a plain file) stays, and is the user's now (out of the record too).
        Copies of anything else stay, recorded. Returns ``(removed, changed)``, their names; an error removing one is
        raised once the record is written, with that copy still in it."""
        recorded = self.read(folder)
        if not recorded:
            return [], []
        removed, changed, error = [], [], None
        for name, entry in list(recorded.items()):
            if name in self.outputs or entry.get("of") != of:
                continue
            path = folder / name
            try:
                if not _exists(path):
                    pass  # (removed meanwhile, or a name no file can have: gone, out of the record)
                elif _as_written(path, entry):
                    path.unlink()
                    removed.append(name)
                else:
                    changed.append(name)
                del recorded[name]
            except OSError as exc:  # (unreadable, not removable: it stays recorded, for the next save to try again)
                error = error or exc
        if removed or changed:
            self._write(folder, recorded)
        if error is not None:
            raise error
        return removed, changed

    def _raw(self, folder):
        """The record in ``folder`` as read (a dict of this writer's), None where there is none, or _NOT_A_RECORD."""
        try:
            record = json.loads(_plain_file_bytes(folder / self.name))
        except FileNotFoundError:
            return None
        except (ValueError, OSError, RecursionError):
            # (not JSON, not UTF-8, nested deeper than json reads; a link, a folder or a file we may not read: the
            # user's, or a record damaged past reading: nothing in it is taken as the writer's, nor written over)
            return _NOT_A_RECORD
        if not isinstance(record, dict) or record.get("written_by") != self._mark:
            return _NOT_A_RECORD
        return record

    def _load(self, folder):
        record = self._raw(folder)
        if not isinstance(record, dict):
            return record
        files = record.get("files")
        if not isinstance(files, dict):
            return {}
        return {name: entry for name, entry in files.items()
                if (name in self.outputs or self.is_copy(name)) and _is_digest(entry)}

    def _record_bytes(self, files, said=(), bucket=None):
        # ("said", "bucket" only where there is something: a record of neither is as before)
        return json.dumps({"written_by": self._mark, "files": files, **({"said": sorted(said)} if said else {}),
                           **({"bucket": bucket} if bucket else {})}, indent=1).encode("utf-8")

    def _write(self, folder, files, said=None):
        """``files`` recorded in ``folder``, with the names :meth:`said` there (``said``, where given, in their place)
        and its :meth:`bucket`; the record removed where neither files nor said are left."""
        said = self.said(folder) if said is None else said
        if not files and not said:
            (folder / self.name).unlink(missing_ok=True)
            return
        with storage.atomic_write(str(folder / self.name), "wb") as f:
            f.write(self._record_bytes(files, said, self.bucket(folder)))


def _exists(path):
    """Is there a file (or a link, a dangling one too) at ``path``? A name no file can have is none: one too long (a
    record edited by hand) made note_said's check raise ENAMETOOLONG at every save, and the search's copies, removed
    after it, were never removed; remove_copies raised it too ("were left" at every save of the bundle). (One with a
    NUL or a lone surrogate is none already: pathlib says so.) Any other error is raised: a file that may be there."""
    try:
        return path.exists() or path.is_symlink()
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return False
        raise


def _there(path):
    """:func:`_exists`, an error taken for no file: note_said forgets a name it cannot check (said again, if it is
    there, is all that is lost)."""
    try:
        return _exists(path)
    except OSError:
        return False


def kept_name(name, whose, n=1):
    """``history.csv`` kept aside as the file of ``whose``'s bundle: ``history.exp1.csv``; the ``n``th such copy
    where the names of the others are taken: ``history.exp1-2.csv``. ``whose``: :func:`whose_part`'s; one that ends
    in ``-NUMBER`` (prefix ``exp-2``) is named with an ``_`` after it (:func:`_unambiguous`)."""
    stem, dot, suffix = name.rpartition(".")
    whose = _unambiguous(whose)
    return f"{stem}.{whose if n == 1 else f'{whose}-{n}'}{dot}{suffix}"


def is_kept_name(name, output, whose=None):
    """Whether ``name`` is one :func:`kept_name` gives ``output`` kept aside as ``whose``'s (any of its copies:
    ``history.exp1.csv``, ``history.exp1-2.csv``, never ``-1`` nor ``-01``), or as anyone's where ``whose`` is None
    (a name in the folder itself: ``history.x/../../y.csv`` names none). The one definition of those names: the
    records' (:meth:`WrittenRecord.is_copy`) and workspace's search for copies of one bundle both ask it."""
    stem, _, suffix = output.rpartition(".")
    who = r"[^/\\]+" if whose is None else rf"{re.escape(_unambiguous(whose))}(?:-(?:[2-9]|[1-9][0-9]+))?"
    return re.fullmatch(rf"{re.escape(stem)}\.{who}\.{re.escape(suffix)}", name, re.DOTALL) is not None


# The hex digits of a bundle's hash in a copy's name (whose_part): a few, kept readable; two bundles named alike but
# for it (runs/a and runs-a's) are one in 16 million to be named alike with it.
_LOCATED_DIGITS = 6
_LOCATED = re.compile(rf"~[0-9a-f]{{{_LOCATED_DIGITS}}}_*\Z")


def whose_part(readable, bundle=None):
    """What names a bundle in its copies' names (:func:`kept_name`'s ``whose``). Where ``bundle`` is None, ``readable``
    as it is (``exp1``: a prefix of one folder in the saving bucket, named as before), with an ``_`` after it where it
    ends as the names below do (``~``, 6 hex digits and any ``_``s: prefix ``x~00aa11``, ``x~00aa11_``). Else
    ``readable`` (a bucket and a prefix's folders joined by ``-``) with ``~`` and a hash of ``bundle``, its full
    location, after it: joined, they were another bundle's name too (``runs-a``: prefix ``runs/a``'s and ``runs-a``'s;
    ``B-x-y``: bucket B's prefix x-y and bucket B-x's prefix y), and a save's note claimed the other's copy as its own.
    Such copies written before, of no hash, are now the names of a one-folder prefix's (``runs-a``'s), read as its own
    where no record says otherwise: the name alone cannot tell."""
    if bundle is None:
        return f"{readable}_" if _LOCATED.search(readable) else readable
    return f"{readable}~{hashlib.sha256(bundle.encode('utf-8', 'surrogatepass')).hexdigest()[:_LOCATED_DIGITS]}"


def _unambiguous(whose):
    """``whose`` as a copy's name holds it: with an ``_`` after it where it ends in ``-NUMBER`` and any ``_``s
    (``runs-a-2``: ``runs-a-2_``; ``runs-a-2_``: ``runs-a-2__``), else as it is (``exp1``). Taken as it is, the 2nd
    copy of ``runs-a``'s (``runs-a-2``) was the 1st of ``runs-a-2``'s, and is_kept_name took it for either bundle's: a
    save of one claimed the other's copy as its own. None ends in ``-NUMBER`` now, and no two ``whose`` are named
    alike (where one is given the ``_``, the other is given one too), so a copy's name is of one ``whose`` and ``n``
    only; the names of the others (``history.exp1-2.csv``, from before too) are as they were."""
    return f"{whose}_" if re.search(r"-[0-9]+_*\Z", whose) else whose


def _plain_file_bytes(path):
    """The bytes of ``path``, a plain file in its folder. A link there (to another run's record, say) is not read: its
    say would remove files here, and a write through it would land outside the folder (OSError, ELOOP); nor is a FIFO,
    whose read would wait for a writer (OSError too)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a plain file")
        return f.read()


def _is_digest(entry):
    """A file's entry: its size and sha256, and what it is of (``of``: a text) where its writer said."""
    return (isinstance(entry, dict) and {"size", "sha256"} <= set(entry) <= {"size", "sha256", "of"}
            and type(entry["size"]) is int and isinstance(entry["sha256"], str)
            and isinstance(entry.get("of", ""), str))


def _digest_only(entry):
    return {"size": entry["size"], "sha256": entry["sha256"]}


def _digest_of(data):
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _digest(path):
    sha = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_HASHED_BLOCK), b""):
            sha.update(block)
            size += len(block)
    return {"size": size, "sha256": sha.hexdigest()}


def _as_written(path, digest):
    """Whether ``path`` is a plain file holding what was written (its size first: a changed size needs no hashing)."""
    if path.is_symlink() or not path.is_file() or path.stat().st_size != digest["size"]:
        return False
    return _digest(path) == _digest_only(digest)
