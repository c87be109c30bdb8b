"""Published sets (model bundles, checkpoints), written atomically and read back verified.

A *set* is a few data files plus a JSON manifest, at a local directory or an ``s3://`` prefix::

    dest/config.json                       the manifest: written LAST, in one atomic step
    dest/model-3f2a9c0d1b2e4f60.params     data files: <stem>-<publish id><ext>, never overwritten
    dest/vocab-3f2a9c0d1b2e4f60.json
    dest/.fasttext.lock                    (local only) serializes publishers; flock, so kill -9 frees it

The manifest is the caller's dict plus ``"written_by": "fasttext_lib"`` and ``"files": {logical
name: {"object": stored name, "sha256": hex, "bytes": n}}`` (on S3 also ``"version"``: the version id its upload
created, where the bucket keeps versions; a manifest whose ``"version"`` is no non-empty string is malformed, refused
as a broken ``"files"`` entry is). Every publish uploads its data
files under names no manifest references yet, then replaces the manifest in one step
(``os.replace`` locally, one PUT on S3), then deletes the objects the replaced manifest
referenced. A failure at any moment therefore leaves the old manifest pointing at the old, untouched
files, or the new one at the new files; readers go through the manifest and verify size and sha256.
On S3 the manifest's PUT is conditional on the manifest read before (If-Match, or If-None-Match: * where none
was): a set another publisher committed meanwhile is never replaced unseen. Where it may be replaced and S3 lists
the prefix, it is read and replaced, its files deleted as those of any replaced set (:func:`_commit`); else the
publish fails in one line and takes its files back.

Stale leftovers: locally, whoever holds the lock knows no other publisher is running, so it deletes
every staging file and unreferenced data file it finds. S3 has no lock: unreferenced data objects
(a killed or losing concurrent publisher's) and incomplete multipart uploads are deleted by the next
publish or remove once older than :data:`ORPHAN_GRACE_SECONDS` (1 hour, so a slow concurrent
upload is never removed under a publisher's feet). Objects of a replaced manifest go at once: their
names are unique to that publish, so no other manifest can reference them. Where the bucket keeps versions, the
manifest records the version each upload created (``"version"`` in its file entry) and those objects are deleted by
it, the replaced manifest's version too, an orphan by its current one (:mod:`.versions`): a plain DELETE there only
adds a delete marker, and the data stayed billed as a noncurrent version. Without s3:ListBucket
(see the comment above :func:`_s3_listing`) the manifest is committed conditionally and only the orphan clean-up is skipped.

A destination is replaced only if it is empty, absent, or holds a manifest with our marker (or only
our own leftovers; an S3 folder's own ``prefix/`` object, as the console makes one, is no content); anything
else -- a directory of the user's files, the current directory, a file or S3 object in the folder's place -- is
refused up front with an error naming it. Files we did not write are never deleted.

API (stable; bundles and checkpoints use it):

* ``publish(dest, files, manifest_name, manifest, overwrite=True) -> str``: ``files`` maps logical name ->
  local path; ``overwrite=False`` refuses a set already there.
* ``read_manifest(src, manifest_name) -> dict``: one-line errors for missing, not JSON, not ours.
* ``fetch(src, manifest, names, local_dir) -> {name: local path}``: verifies size and sha256;
  raises :class:`SetChanged` if a file is gone because a publisher replaced the set meanwhile.
* ``read_set(src, manifest_name, names, local_dir) -> (manifest, {name: local path})``: both, retried
  when the set changed under the reader (what loaders should call).
* ``remove(dest, manifest_name)``: delete a published set (and our leftovers, never other files).
* ``check_writable(dest, manifest_name=None)``: fail fast before training (also refuses a foreign
  destination when ``manifest_name`` is given); ``check_output_file(uri, example)`` the same for one file.
"""
import contextlib
import datetime
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import time

from ..errors import FastTextError, out_of_memory_naming, refuse_standard_output
from . import s3
from .s3 import (_CREDENTIALS_REFUSED, BeingWritten, Damaged, SetChanged, _bucket_exists,
                 _bucket_listable, _endpoint_only, _is_missing, _keeps_versions, _key, _may_delete, _operation_members,
                 _status, already_exists, get_s3_object, is_forbidden, is_s3, join, s3_client, s3_errors, split_s3,
                 upload_file)
from .files import (LOOP, _why_no_file, cannot_read, check_name_lengths, check_replaceable, exists, hash_file,
                    is_a_loop, refuse_existing, why_not_written, write_target)
from .atomic import (NO_ROOM, STAGING_PREFIX, _NO_HARD_LINKS, _missing_directories, _remove_if_empty,
                     size_noted_on_efbig, why_too_large)
from .versions import created_version, delete_replaced, delete_set_object, delete_written, say_kept


MARKER_KEY, MARKER = "written_by", "fasttext_lib"
LOCK_NAME = ".fasttext.lock"
PROBE_PREFIX = ".fasttext-probe-"
ORPHAN_GRACE_SECONDS = 3600
_OBJECT_RE = re.compile(r"^[^/]+-[0-9a-f]{16}(\.[^./-]+)?$")


def _is_ours(name):
    """Names only this module creates inside a destination."""
    return (name == LOCK_NAME or name.startswith(STAGING_PREFIX) or name.startswith(PROBE_PREFIX)
            or bool(_OBJECT_RE.match(name)))


def _object_name(logical, publish_id):
    stem, ext = os.path.splitext(logical)
    return f"{stem}-{publish_id}{ext}"


def check_output_file(uri, example, flag="", overwrite=True, hint="pass --overwrite to replace it"):
    """Fail fast, before any work, if one output file could not be written: an S3 URI must name an object
    under a writable prefix; a local path must be no directory (``example``: the file name the message
    suggests inside it), device, FIFO or socket, in a writable directory. ``flag``: the option that
    named it, for the messages. ``overwrite=False``: an existing ``uri`` is refused too (``hint``: what
    to do instead, in the message)."""
    if not isinstance(uri, (str, os.PathLike)):  # a pandas Series wrote a file named "0    x\ndtype: object"
        raise FastTextError(f"{flag + ': ' if flag else ''}an output file name (a str or path) is needed, got "
                            f"{type(uri).__name__} {uri!r:.60}")
    uri = str(uri)
    # "-", which --input reads as stdin, wrote a file named "-": the one rule for it (its callers apply it first)
    refuse_standard_output(uri.strip(), flag or "uri", "the file", f"a file name such as {example}")
    if not uri.strip():  # "" was "  is a directory" (the current one)
        raise FastTextError(f"{flag + ': ' if flag else ''}an output file name is needed, got {uri!r}; give one such "
                            f"as {example}")
    if is_s3(uri):
        bucket, key = split_s3(uri)
        if not key or key.endswith("/"):
            raise FastTextError(f"{flag + ': ' if flag else ''}S3 URI names no object: {uri}")
        if _s3_folder(bucket, key, uri):  # as a local directory is: an object "vectors" beside "vectors/..."
            raise FastTextError(f"{flag + ' ' if flag else ''}{uri} is a folder (objects are stored under {uri}/); give "
                                f"a file name such as {join(uri, example)}")
        _refuse_an_object_of_a_set(uri, bucket, key, flag)  # (as a local file's, before the existing object's refusal)
        if not overwrite:  # where S3 cannot say (no s3:ListBucket), the write itself refuses an existing object
            refuse_existing(uri, hint)
        check_writable(join(f"s3://{bucket}", *key.split("/")[:-1]))
        return
    path = os.path.abspath(uri)
    if os.path.isdir(path):
        raise FastTextError(f"{flag + ' ' if flag else ''}{uri} is a directory; give a file name such as "
                            f"{os.path.join(uri, example)}")
    check_replaceable(path)  # first: --overwrite would not help a FIFO or device
    check_name_lengths(path, uri)
    _refuse_a_file_of_a_set(uri, path, flag)  # (before the existing file's refusal, which says to pass --overwrite)
    if not overwrite:
        refuse_existing(uri, hint)
    check_writable(os.path.dirname(path), what=uri)


# The most bytes read of a .json file to tell whether it is a set's manifest (a bundle's config.json is ~2 KB)
_MANIFEST_READ_MAX = 1 << 20


def _refuse_a_file_of_a_set(uri, path, flag):
    """A local output file is never a file of a published set (a model bundle, a checkpoint: its manifest or a data
    file that manifest lists), ``--overwrite`` or not: ``export-vectors``, ``import-folders`` and ``--autotune-trials``
    given ``other_model/config.json --overwrite`` wrote over it, and that bundle no longer loaded. (The file a write
    lands on is checked: a symbolic link's target. A hard link is another name, which the rename replaces alone.)"""
    target = write_target(path)
    folder, name = os.path.split(target)
    _refuse_a_member(uri, folder, name, lambda other: _manifest_at(os.path.join(folder, other)),
                     lambda: sorted(os.listdir(folder)) if os.path.isfile(target) else [], flag)


def _refuse_an_object_of_a_set(uri, bucket, key, flag):
    """:func:`_refuse_a_file_of_a_set` of an S3 output: ``s3://b/other_model/config.json --overwrite`` replaced that
    bundle's manifest just the same. Where S3 refuses the read or the listing (no s3:GetObject, no s3:ListBucket), a
    set there cannot be told from none, and the write goes ahead (as it did before this check)."""
    prefix, _, name = key.rpartition("/")
    folder = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
    _refuse_a_member(uri, folder, name, lambda other: _s3_manifest_at(bucket, _key(prefix, other)),
                     lambda: _s3_names(bucket, prefix, folder), flag)


def _refuse_a_member(uri, folder, name, manifest_at, names, flag):
    """Refuse ``uri`` (``name`` in ``folder``) where it is a set's manifest, or a data file a manifest beside it lists.
    ``manifest_at(name)``: the manifest of ours that file of ``folder`` holds, or None; ``names()``: the files of
    ``folder``, or none where ``name`` is not one of them."""
    if name.endswith(".json") and not _is_ours(name) and manifest_at(name) is not None:
        raise FastTextError(f"{flag + ' ' if flag else ''}{uri} is the manifest of the model bundle or checkpoint "
                            f"{folder}: replaced, that set would no longer load; write the file elsewhere")
    if not _OBJECT_RE.match(name):
        return
    listed = names()
    for other in listed if name in listed else ():  # (only a data file's name, <stem>-<16 hex digits>, gets here)
        manifest = manifest_at(other) if other.endswith(".json") and not _is_ours(other) else None
        if manifest is not None and any(entry["object"] == name for entry in manifest["files"].values()):
            raise FastTextError(f"{flag + ' ' if flag else ''}{uri} is a file of the model bundle or checkpoint "
                                f"{folder} (its {other} lists it): replaced, that set would no longer load; write the "
                                f"file elsewhere")


def _manifest_at(path):
    """The manifest of ours (:func:`_parse_manifest`) the local file ``path`` holds; None where it holds none."""
    try:
        with open(path, "rb") as f:
            raw = f.read(_MANIFEST_READ_MAX + 1)
        return None if len(raw) > _MANIFEST_READ_MAX else _parse_manifest(raw, path)
    except (OSError, Damaged):
        return None


class _NoManifest(Exception):
    """An object too large to be a manifest, found while it was read."""


def _s3_manifest_at(bucket, key):
    """:func:`_manifest_at` of the S3 object ``key``: None where it is missing, unreadable to this caller (or in an
    archive storage class), larger than a manifest is, or no manifest of ours."""
    chunks = []

    def keep(chunk):
        chunks.append(chunk)
        if sum(map(len, chunks)) > _MANIFEST_READ_MAX:  # (stop reading: a large object is read no further)
            raise _NoManifest

    uri = f"s3://{bucket}/{key}"
    with s3_errors(uri):
        try:
            get_s3_object(bucket, key, keep)
        except _NoManifest:
            return None
        except Exception as exc:
            # S3 will not give this caller its bytes (missing, forbidden; archived: InvalidObjectState; encrypted with
            # the customer's key: 400): no manifest to read there, and the write S3 takes goes ahead, as before this
            # check. (An S3 fault, 5xx, is said as it is.)
            if 400 <= (_status(exc) or 0) < 500:
                return None
            raise
    try:
        return _parse_manifest(b"".join(chunks), uri)
    except Damaged:
        return None


def _s3_names(bucket, prefix, folder):
    """The objects directly under ``prefix/`` (:func:`_s3_listing`); none where listing is refused."""
    with s3_errors(folder):
        try:
            return sorted(n for n in _s3_listing(s3_client(), bucket, prefix) if not n.endswith("/"))
        except Exception as exc:
            if is_forbidden(exc):
                return []
            raise


def _s3_folder(bucket, key, uri):
    """Does S3 hold objects under ``key/`` (the S3 form of a folder)? False where listing is refused (no
    s3:ListBucket): that alone is no reason to stop a write."""
    with s3_errors(uri):
        try:
            listing = s3_client().list_objects_v2(Bucket=bucket, Prefix=key + "/", MaxKeys=1)
        except Exception as exc:
            if is_forbidden(exc):
                return False
            raise
    return bool(listing.get("KeyCount"))


def _parse_manifest(raw, where):
    try:
        manifest = json.loads(raw)
    except ValueError:
        raise Damaged(f"{where} is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get(MARKER_KEY) != MARKER:
        raise Damaged(f'{where} was not written by this library (no "{MARKER_KEY}": "{MARKER}" marker)')
    files = manifest.get("files")
    ok = isinstance(files, dict) and all(
        isinstance(v, dict) and isinstance(v.get("object"), str) and _OBJECT_RE.match(v["object"])
        and isinstance(v.get("sha256"), str) and isinstance(v.get("bytes"), int) for v in files.values())
    if not ok:
        raise Damaged(f'{where} is malformed: its "files" entry is missing or broken')
    for name, entry in sorted(files.items()):
        # The version a file's upload created, by which a replace or remove deletes it: one that is no version id (a
        # manifest edited by hand) was taken for "none recorded", and the files stayed as noncurrent versions, unsaid.
        if "version" in entry and not (isinstance(entry["version"], str) and entry["version"]):
            raise Damaged(f'{where} is malformed: the "version" of its file {name} is {entry["version"]!r}, not an S3 '
                          f'version id (a non-empty string)')
    return manifest


def read_manifest(src, manifest_name):
    """The manifest of the set at ``src``; one-line errors when it is missing, not JSON or not ours."""
    src = str(src)
    with out_of_memory_naming(f"read {src}"):
        return _read_manifest(src, manifest_name)


def _read_manifest(src, manifest_name):
    if is_s3(src):
        return _read_s3_manifest(src, manifest_name)[0]
    where = join(src, manifest_name)
    if not os.path.exists(src):
        if is_a_loop(src):  # (exists() is False for it too: "does not exist", of a name that is there)
            raise FastTextError(f"cannot read {src}: {LOOP}")
        raise FastTextError(f"{src} does not exist")
    if not os.path.isdir(src):
        raise FastTextError(f"{src} is not a directory")
    try:
        with open(where, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise FastTextError(f"{src} has no {manifest_name}") from None
    except OSError as exc:
        raise cannot_read(where, exc) from None
    return _parse_manifest(raw, where)


def _read_s3_manifest(src, manifest_name):
    """``(manifest, the GetObject answer it was read by)`` of the set at the S3 prefix ``src``: its ETag makes a
    conditional replace, its VersionId is deleted once the manifest is replaced or removed."""
    where = join(src, manifest_name)
    bucket, prefix = split_s3(src)
    with s3_errors(where):
        try:
            chunks = []
            answer = get_s3_object(bucket, _key(prefix.rstrip("/"), manifest_name), chunks.append)
            raw = b"".join(chunks)
        except Exception as exc:
            if _is_missing(exc) and _bucket_exists(bucket):
                raise FastTextError(f"{src} has no {manifest_name}") from None
            raise
    return _parse_manifest(raw, where), answer


def _referenced(manifest):
    return {v["object"] for v in manifest["files"].values()} if manifest else set()


def _recorded_versions(manifest):
    """``{object: the version its upload created}`` of the files ``manifest`` names; ``""`` where it records none
    (a set published before versions were recorded, or to a bucket that kept none): deleted by a plain DELETE."""
    if not manifest:
        return {}
    return {v["object"]: v.get("version", "") for v in manifest["files"].values()}  # (each checked: _parse_manifest)


def _with_files(manifest, entries):
    out = {k: v for k, v in dict(manifest).items() if k not in ("files", MARKER_KEY)}
    out[MARKER_KEY] = MARKER
    out["files"] = entries
    return json.dumps(out, indent=2, sort_keys=True).encode("utf-8")


def _check_files(files, manifest_name):
    for name, path in files.items():
        if not name or "/" in name or name.startswith(".") or name == manifest_name:
            raise ValueError(f"bad logical file name {name!r}")
        if not os.path.isfile(path):
            raise ValueError(f"{path} (for {name}) is not a file")


def _verify(src, name, entry, path):
    size = os.path.getsize(path)
    if size < entry["bytes"]:
        raise Damaged(f"{src}: {name} is truncated: {size} of {entry['bytes']} bytes")
    if size != entry["bytes"] or hash_file(path)["sha256"] != entry["sha256"]:
        raise Damaged(f"{src}: {name} does not match its checksum in the manifest (corrupt or from another set)")


def _refusal_error(dest, why):
    """The error refusing to write a set to ``dest`` for ``why`` (the caller raises it)."""
    return FastTextError(f"refusing to write to {dest}: {why}; name a new or empty directory, or one this library wrote")


def _refuse_a_loop(dest):
    """A destination folder that is a loop of symbolic links is named so: "exists and is not a directory" had the user
    look for a file of that name."""
    if is_a_loop(dest):
        raise FastTextError(f"cannot write {dest}: {LOOP}")


def _check_local_destination(dest, manifest_name):
    """Raise unless ``dest`` is absent, empty, ours, or holds only our leftovers. Writes nothing."""
    if os.path.realpath(dest) == os.path.realpath(os.getcwd()):
        raise _refusal_error(dest, "it is the current directory")
    if not os.path.lexists(dest):
        _check_creatable(dest)
        return None
    if not os.path.isdir(dest):
        _refuse_a_loop(dest)
        raise FastTextError(f"{dest} exists and is not a directory")
    names = os.listdir(dest)
    if manifest_name in names:
        try:
            return read_manifest(dest, manifest_name)
        except FastTextError as exc:
            raise _refusal_error(dest, str(exc)) from None
    _refuse_foreign(dest, sorted(n for n in names if not _is_ours(n)), "files", lambda name: os.path.isdir(
        os.path.join(dest, name)) and _manifest_at(os.path.join(dest, name, manifest_name)) is not None)
    return None


# The most folders of a refused destination looked into for a set of ours (one read each: S3 GETs on a refusal).
_FOLDERS_LOOKED_INTO = 10


def _refuse_foreign(dest, foreign, kind, holds_a_set):
    """Refuse ``dest`` for ``foreign``, the names in it that are none of this library's files (``kind``: "files" or
    "objects"); ``holds_a_set(name)``: whether that name is a folder holding a set of ours. Such a folder was named as
    one of the files this library did not write: notebook 02 run with ``run_name exp/1``, then with ``exp``, was told
    its own first bundle was none of the library's."""
    sets = [n for n in foreign[:_FOLDERS_LOOKED_INTO] if holds_a_set(n)]
    others = [n for n in foreign if n not in sets]
    why = [f"{kind} this library did not write ({_first_few(others)})"] if others else []
    if sets:
        folders = _first_few([n.rstrip("/") + "/" for n in sets])  # (S3's sub-prefixes end in /, local names do not)
        why.append(f"other bundles or checkpoints, saved in folders under it ({folders}), and a bundle's or "
                   f"checkpoint's folder holds its own files alone")
    if why:
        raise _refusal_error(dest, "it holds " + ", and ".join(why))


def _first_few(names):
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def _check_creatable(dest):
    ancestor = os.path.dirname(dest)
    while not os.path.lexists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise FastTextError(f"cannot create {dest}: {ancestor} is not a directory")
    check_name_lengths(dest)


@contextlib.contextmanager
def _locked(dest, create=True):
    """Hold an exclusive flock on ``dest/.fasttext.lock`` (the kernel drops it if we are killed)."""
    import fcntl

    path = os.path.join(dest, LOCK_NAME)
    while True:
        if create:
            os.makedirs(dest, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:  # a remove() may have unlinked the file we waited on: lock the current one instead
                current, held = os.stat(path), os.fstat(fd)
                same = (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_hashing(src, dst):
    digest, size = hashlib.sha256(), 0
    with open(src, "rb") as fin, open(dst, "xb") as fout, size_noted_on_efbig(fout):
        for chunk in iter(lambda: fin.read(1 << 20), b""):
            digest.update(chunk)
            fout.write(chunk)
            size += len(chunk)
        fout.flush()
        os.fsync(fout.fileno())
    return {"sha256": digest.hexdigest(), "bytes": size}


def _move_hashing(src, dst):
    """Hard-link ``src`` (a staged temporary on ``dst``'s filesystem) as ``dst``: the same result as
    :func:`_copy_hashing` (a durable new file, never an existing one replaced) without writing the data
    a second time (an 800 MB bigram bundle: one read to hash it instead of a read and a write)."""
    from concurrent.futures import ThreadPoolExecutor  # (here: not an import for every reader of storage)

    with open(src, "rb") as f, ThreadPoolExecutor(1) as pool:
        # durable before the manifest names it, as the copy is; the disk writes it while we hash (the GIL is
        # released by both): a 105 MB rows file took 0.04 s + 0.07 s one after the other
        synced = pool.submit(os.fsync, f.fileno())
        entry = hash_file(src)
        synced.result()
    try:
        os.link(src, dst)  # fails if dst exists, as open(dst, "xb") does
        return entry
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
    try:
        return _copy_hashing(src, dst)  # a filesystem without hard links (some FUSE / SMB mounts): copy
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        # "No space left on device" alone, of a move the user thought took no room: say why a copy was needed
        raise FastTextError(f"cannot write {os.path.dirname(dst)}: {src} is copied there, as the file system cannot "
                            f"hard-link it (a file system without hard links, or a link refused), and the copy "
                            f"failed: {exc.strerror}; free {os.path.getsize(src)} bytes there (the copy's size), or "
                            f"write it to another location") from None


def _same_filesystem(path, directory):
    try:
        return os.stat(path).st_dev == os.stat(directory).st_dev
    except OSError:
        return False


def _delete_local(dest, names):
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(dest, name))


def _local_leftovers(dest, keep):
    """Staging files and data files no manifest references. Only stale while we hold the lock."""
    return [n for n in os.listdir(dest)
            if n not in keep and n != LOCK_NAME and (n.startswith(STAGING_PREFIX) or _OBJECT_RE.match(n))]


def _publish_local(dest, files, manifest_name, manifest, move=False, overwrite=True, hint=None, on_commit=None):
    dest = os.path.abspath(dest)
    if _check_local_destination(dest, manifest_name) is not None and not overwrite:
        raise already_exists(os.path.join(dest, manifest_name), hint)
    created = _missing_directories(dest)  # what os.makedirs makes (parents too): a failure leaves none of them
    committed = told = False
    try:
        with _locked(dest):
            old = _check_local_destination(dest, manifest_name)  # again: another publisher may have won
            if old is not None and not overwrite:
                raise already_exists(os.path.join(dest, manifest_name), hint)
            _delete_local(dest, _local_leftovers(dest, _referenced(old)))
            publish_id = secrets.token_hex(8)
            entries, written = {}, []
            staged_manifest = os.path.join(dest, f"{STAGING_PREFIX}{publish_id}-{manifest_name}")
            try:
                for name, path in sorted(files.items()):
                    obj = _object_name(name, publish_id)
                    written.append(obj)
                    place = _move_hashing if move and _same_filesystem(path, dest) else _copy_hashing
                    entries[name] = dict(object=obj, **place(path, os.path.join(dest, obj)))
                with open(staged_manifest, "xb") as f:
                    f.write(_with_files(manifest, entries))
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(staged_manifest, os.path.join(dest, manifest_name))  # the commit point
                committed = True
                if on_commit is not None:
                    on_commit()
                    told = True
                _fsync_dir(dest)
            except BaseException:
                # A signal's handler runs between two bytecodes: also after os.replace put our manifest in place
                # and before `committed = True`. Taking our files back then left a manifest naming deleted files
                # (a checkpoint no resume could read, a bundle that replaced the old one and could not load).
                committed = committed or _names_ours(dest, manifest_name, written)
                _delete_local(dest, [os.path.basename(staged_manifest)] + ([] if committed else written))
                if committed and not told and on_commit is not None:
                    # (as on S3: a stop there, before on_commit, left the caller taking its bundle for unsaved: a
                    # trial table taken back from a new bundle, a stop's line saying to run again what --output refused)
                    on_commit()
                raise
            _delete_local(dest, _referenced(old) - set(written))
    except BaseException as exc:
        # We made dest (a lock that could not be taken too): leave no folder. Not where another publisher has put
        # files (it won the race for an empty dest): its lock file stays, or a third one would lock a new one.
        if created and not committed and set(_listing_or_none(dest)) <= {LOCK_NAME}:
            with contextlib.suppress(OSError):  # (its own failure, ENAMETOOLONG as the makedirs', hid this one's line)
                _delete_local(dest, [LOCK_NAME])
            _remove_if_empty(created)  # only empty ones: never another writer's files
        if isinstance(exc, OSError):  # (a bundle staged in TMPDIR, copied to a FAT32 stick: "File too large" said no more)
            raise FastTextError(f"cannot write {dest}: {why_not_written(dest, exc)}{why_too_large(exc)}") from None
        raise
    return dest


def _listing_or_none(directory):
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _names_ours(dest, manifest_name, written):
    """Whether the manifest at ``dest`` names the files ``written`` (by a publish whose commit it is)."""
    try:
        return bool(_referenced(read_manifest(dest, manifest_name)) & set(written))
    except Exception:
        return False


def _remove_local(dest, manifest_name):
    dest = os.path.abspath(dest)
    if not os.path.isdir(dest):
        return
    _check_local_destination(dest, manifest_name)
    try:
        with _locked(dest, create=False):
            old = _check_local_destination(dest, manifest_name)
            _delete_local(dest, [manifest_name] if old else [])  # first: readers now see no set
            _delete_local(dest, _local_leftovers(dest, set()))
            _delete_local(dest, [LOCK_NAME])
        with contextlib.suppress(OSError):
            os.rmdir(dest)  # only if nothing else (the user's files) is left
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FastTextError(f"cannot remove {dest}: {exc.strerror or exc}") from None


#
# Without s3:ListBucket (a role that may put, get and delete objects under a prefix but not list it) S3
# answers 403 for a missing key, and nothing can be listed: neither whether the prefix holds other objects
# nor the orphans of an interrupted earlier run. What still holds there: data files under run-unique
# names, the manifest last; the manifest is committed with a conditional PUT (If-None-Match: * where no
# manifest was seen, If-Match: its ETag where one was read), so an existing or concurrent set is never
# replaced unseen; a failed run deletes what it uploaded (DeleteObject needs no listing); a replaced set's
# files are known from its manifest and deleted. Only the orphan and multipart clean-up is skipped.

def _s3_listing(client, bucket, prefix):
    """``{name: age in seconds}`` of the objects directly under ``prefix/`` (sub-prefixes end in ``/``). The folder's
    own object (``prefix/`` itself, which the S3 console's "Create folder" stores) is none of them: it was a file
    "this library did not write", named as "" in the refusal of every bundle written to such a folder."""
    now = datetime.datetime.now(datetime.timezone.utc)
    found = {}
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=_key(prefix, ""), Delimiter="/")
    for page in pages:
        for obj in page.get("Contents", []):
            if obj["Key"] != _key(prefix, ""):
                found[obj["Key"][len(_key(prefix, "")):]] = (now - obj["LastModified"]).total_seconds()
        for sub in page.get("CommonPrefixes", []):
            found[sub["Prefix"][len(_key(prefix, "")):]] = 0.0
    return found


def _check_s3_destination(client, bucket, prefix, manifest_name, dest, attempts=3):
    """``(old manifest or None, the GetObject answer it was read by, listed)``; raises unless ``dest`` is absent,
    empty, ours, or holds only our leftovers. ``listed`` is False where S3 refused the listing (no s3:ListBucket): then no
    manifest was read but one may exist (S3 answers 403 for a missing key then), and the publish commits
    conditionally instead of checking here."""
    try:
        old, read = _read_s3_manifest(f"s3://{bucket}/{prefix}", manifest_name)
        return old, read, True
    except Damaged as exc:  # not JSON, not ours: not a set to replace
        raise _refusal_error(dest, str(exc)) from None
    except FastTextError as exc:
        # 403 for a missing manifest is what S3 answers a caller without s3:ListBucket: the listing tells
        refused = str(exc) if str(exc).startswith("access denied") else None
        if not (str(exc).endswith(f"has no {manifest_name}") or refused):
            raise  # S3 failed to answer (throttled, 5xx, reset): said as it is, not as a refusal of the destination
    try:
        listing = _s3_listing(client, bucket, prefix)
    except Exception as exc:
        if is_forbidden(exc):
            return None, None, False
        raise
    if refused and manifest_name in listing:
        raise _refusal_error(dest, refused)
    if manifest_name in listing and attempts > 1:  # a concurrent publisher committed meanwhile: check that
        return _check_s3_destination(client, bucket, prefix, manifest_name, dest, attempts - 1)
    _refuse_foreign(dest, sorted(n for n in listing if not _is_ours(n)), "objects", lambda name: name.endswith(
        "/") and _s3_manifest_at(bucket, _key(prefix, name + manifest_name)) is not None)  # (a sub-prefix ends in /)
    return None, None, True


def _refuse_an_object_as_folder(bucket, prefix):
    """Refuse to write under ``prefix/`` where ``prefix`` is an object (``--output s3://b/data/train.csv``, the
    training data itself): the files went under ``train.csv/`` beside it, silently, a file and a folder of one name
    that no disk can hold (``aws s3 sync`` of them fails), where a local file in a folder's place is refused. Where
    S3 will not say (403 without s3:GetObject), nothing is refused."""
    where = f"s3://{bucket}/{prefix}"
    if not prefix or not exists(where, forbidden_is_missing=True):
        return
    raise FastTextError(f"{where} is an object, not a folder: what is written there would go under {where}/, "
                        f"beside it; choose another location")


def _s3_collect(client, bucket, prefix, keep, replaced, manifest=None):
    """Delete ``replaced`` (``{object: its recorded version}``: :func:`_recorded_versions`) now and unreferenced data
    objects / multipart uploads older than the grace period (those only where S3 lets us list them: without
    s3:ListBucket nothing can find them); each object by the version its upload created where the bucket keeps
    versions (versions.delete_set_object), and ``manifest`` (``(key, read, replacing)``: versions.delete_replaced),
    the replaced or removed manifest's version. One line names what S3 refused to delete by version."""
    replaced = {name: version for name, version in replaced.items() if name not in keep}
    kept = []
    try:
        _collect_objects(client, bucket, prefix, keep, replaced, manifest, kept)
    finally:
        say_kept(kept, "the object(s)", "this library", "a delete marker (a manifest: by its replacement)")


def _collect_objects(client, bucket, prefix, keep, replaced, manifest, kept):
    try:
        listing = _s3_listing(client, bucket, prefix)
    except Exception as exc:
        if not is_forbidden(exc):
            raise
        listing = {}
    orphans = {name for name, age in listing.items()
               if name not in keep and _is_ours(name) and name != LOCK_NAME and age > ORPHAN_GRACE_SECONDS}
    keeps_versions = {}  # (asked only where an orphan is found: the replaced files' versions are recorded)
    for name in sorted(set(replaced) | orphans):
        _unless_refused(name not in replaced, delete_set_object, client=client, bucket=bucket,
                        key=_key(prefix, name), recorded=replaced.get(name), kept=kept, keeps_versions=keeps_versions)
    if manifest is not None:
        delete_replaced(client, bucket, *manifest, kept)
    now = datetime.datetime.now(datetime.timezone.utc)
    try:
        uploads = _multipart_uploads(client, bucket, _key(prefix, ""))
    except Exception as exc:
        if not is_forbidden(exc):
            raise
        uploads = []
    for upload in uploads:
        name = upload["Key"][len(_key(prefix, "")):]
        if "/" not in name and (now - upload["Initiated"]).total_seconds() > ORPHAN_GRACE_SECONDS:
            _unless_refused(True, client.abort_multipart_upload, Bucket=bucket, Key=upload["Key"],
                            UploadId=upload["UploadId"])


def _unless_refused(orphan, call, **arguments):
    """``call(**arguments)``; for an ``orphan`` (what a killed run left, found by listing) a refusal (403: a role that
    may list but not delete or abort) is no error: the set was published or removed, and only the leftover stays, as
    it does where nothing may list it. A removal said 'access denied' though its set was gone (a checkpoint's older
    epoch: the training stopped there)."""
    try:
        call(**arguments)
    except Exception as exc:
        if not (orphan and is_forbidden(exc)):
            raise


def _multipart_uploads(client, bucket, key_prefix):
    """Every multipart upload in progress under ``key_prefix``, page after page (botocore's paginator): one answer of
    S3's lists at most 1,000, and uploads past the first page (a prefix many killed runs wrote to) were never
    collected. (moto answers every upload in one page: the orphan test of tests/test_storage.py runs this path, not
    a second page.)"""
    pages = client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=key_prefix)
    return [upload for page in pages for upload in page.get("Uploads", [])]


def _commit_condition(client, old, etag, listed, overwrite):
    """The condition of the manifest PUT: ``If-None-Match: *`` where no set may be replaced or none was
    seen, ``If-Match: ETag`` where the set read is replaced: a set another publisher committed since is never
    replaced unseen (its files would stay behind: :func:`_commit`). Replacing, a botocore without the condition
    puts plainly (``{}``); ``None``: create-only, and no conditional writes in this botocore."""
    members = _operation_members(client)
    if not overwrite or (old is None and not listed):
        return {"IfNoneMatch": "*"} if "IfNoneMatch" in members else None
    wanted = {"IfMatch": etag} if old is not None else {"IfNoneMatch": "*"}
    return wanted if all(wanted.values()) and set(wanted) <= members else {}


def _put_manifest(client, bucket, key, body, condition, dest, where, overwrite, hint):
    """The commit point: one PUT of the manifest, with ``condition``; a refused one is a one-line error (the
    caller checks it against the live manifest: the retry of a PUT whose answer was lost is refused too). Returns
    the PUT's answer (its VersionId: the version it created, beside the one it replaced)."""
    import botocore.exceptions as bex

    if condition is None:  # no conditional writes in this botocore: a HEAD first, as _upload_new does
        try:
            client.head_object(Bucket=bucket, Key=key)
        except Exception as exc:
            if not (_is_missing(exc) or (overwrite and is_forbidden(exc))):
                if is_forbidden(exc):
                    raise FastTextError(
                        f"cannot tell whether {where} exists: S3 refused to say (403: without s3:ListBucket a missing "
                        f"object is refused too) and this S3 client cannot write conditionally; grant "
                        f"s3:ListBucket") from None
                raise
        else:
            if not overwrite:
                raise already_exists(where, hint)
        condition = {}

    def put():
        return client.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json", **condition)
    try:  # (a create-only one answered 409 is sent again: the other save in flight may fail)
        return s3.sent_again_on_conflict(put, where) if condition and not overwrite else put()
    except bex.ClientError as exc:
        code = exc.response.get("Error", {}).get("Code")
        # an S3-compatible store without conditional writes (501), or one that takes If-None-Match but answers
        # If-Match, which it does not support, with 400 (as checkpoints._write_note meets them)
        if code in ("NotImplemented", "501", "InvalidArgument") and condition:
            return _put_manifest(client, bucket, key, body, None, dest, where, overwrite, hint)
        if code in ("ConditionalRequestConflict", "409"):  # (two conditional PUTs of this key in flight at once)
            raced = _Raced if overwrite else _RacedToCreate
            raise raced(f"{dest} was being written by another save at the same time; try again") from None
        if "IfMatch" in condition and code in ("NoSuchKey", "404"):  # the set read was removed meanwhile
            raise _Raced(f"{dest} was replaced by another save meanwhile; {_RETRY}") from None
        if code not in ("PreconditionFailed", "412"):
            raise
        if not overwrite:
            raise already_exists(where, hint) from None
        if "IfMatch" in condition:
            raise _Raced(f"{dest} was replaced by another save meanwhile; {_RETRY}") from None
        try:  # If-None-Match on a manifest no listing could show: another save's, or one we may not read
            read_manifest(dest, os.path.basename(key))
        except FastTextError as unread:
            raise FastTextError(f"cannot replace {where}: it exists, but reading it failed ({unread}), so neither that "
                                f"this library wrote it nor which files it holds can be checked; grant s3:GetObject "
                                f"or choose another destination") from None
        raise _Raced(f"{dest} was written by another save meanwhile; {_RETRY}") from None


_RETRY = "nothing of this one was kept; try again"


class _Raced(FastTextError):
    """The manifest's conditional PUT was refused: another publisher committed (or removed the set) since it was
    read. :func:`_commit` reads it again and replaces it where that is allowed; else this is the one-line error."""


class _RacedToCreate(_Raced, BeingWritten):
    """A 409 without overwrite: another save was putting its set in place here at the same moment, which this one, once
    that is done, may not replace. :func:`_put_manifest` sends the PUT again (that save may fail, and this one then
    lands: s3.sent_again_on_conflict); still 409 at its last attempt, an AlreadyExists too (s3.BeingWritten), so a
    caller that keeps its files beside a taken destination (bundle.save_bundle's keep_beside, the command line's
    train) does so rather than lose them."""


_COMMIT_ATTEMPTS = 3  # a set read again and again, each time replaced before our PUT: publishers keep racing


def _commit(client, bucket, prefix, manifest_name, body, seen, ours, listable, overwrite, dest, where, hint):
    """The commit point: the manifest's PUT, conditional on ``seen`` (``(old manifest, its GetObject answer,
    listed)``: :func:`_check_s3_destination`'s). Returns ``(the PUT's answer, the set it replaced, its GetObject
    answer)``. Another publisher may commit between that look and this PUT: two runs writing one --output at once, or
    two runs of one command resuming one --checkpoint-dir, which save each epoch's set together. Where a set may be
    replaced (``overwrite``) and S3 lists the prefix, the set now there is read and replaced, conditionally on it
    again: its files go with it as a replaced set's. A plain PUT replaced it unseen and left its files unreferenced,
    collected only by a publish there an hour later (ORPHAN_GRACE_SECONDS): in a checkpoint's epoch folder, which no
    run visits again, they stayed for good. Without a listing a race stays an error, as before. ``ours``: the
    objects this publish uploaded (a set naming them, read again, is our own PUT, whose answer was lost: a success,
    its GetObject answer returned for the PUT's)."""
    old, read, listed = seen
    for attempt in range(_COMMIT_ATTEMPTS):
        condition = _commit_condition(client, old, (read or {}).get("ETag"), listed, overwrite)
        try:
            put = _put_manifest(client, bucket, _key(prefix, manifest_name), body, condition, dest, where, overwrite,
                                hint)
            return put, old, read
        except _Raced:
            if not (overwrite and listable) or attempt == _COMMIT_ATTEMPTS - 1:
                raise
            replaced = old, read
            old, read, listed = _check_s3_destination(client, bucket, prefix, manifest_name, dest)
            if old is not None and ours & _referenced(old):  # our own PUT landed: botocore's retry was refused
                # what it replaced is the set read before this PUT, not the first one seen (that one's files stayed
                # behind after a second attempt); our manifest's GetObject answer stands for the lost PUT answer: it
                # names the version that PUT wrote, which replaced that set's manifest version
                return (read, *replaced)


def _publish_s3(dest, files, manifest_name, manifest, overwrite=True, hint="pass --overwrite to replace it",
                on_commit=None, on_undecided=None):
    from concurrent.futures import ThreadPoolExecutor

    bucket, prefix = split_s3(dest)
    prefix = prefix.rstrip("/")
    dest = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
    where = join(dest, manifest_name)
    client = s3_client()
    publish_id = secrets.token_hex(8)
    uploaded, entries, committing, put = [], {}, False, None  # uploaded: (name, its upload's answer) each
    with s3_errors(dest):
        listable = _bucket_listable(client, bucket)
        _refuse_an_object_as_folder(bucket, prefix)
        old, read, listed = _check_s3_destination(client, bucket, prefix, manifest_name, dest)
        if old is not None and not overwrite:
            raise already_exists(where, hint)
        try:
            for name, path in sorted(files.items()):
                obj = _object_name(name, publish_id)
                uploaded.append([obj, None])
                with ThreadPoolExecutor(1) as pool:  # hashed while it uploads (the manifest needs it only after)
                    hashed = pool.submit(hash_file, path)
                    # (one S3 creates after a stop is unreferenced: no manifest is put after a data file's stop)
                    uploaded[-1][1] = upload_file(client, path, bucket, _key(prefix, obj),
                                                  on_late=lambda answer, key=_key(prefix, obj):
                                                  delete_written(client, [(bucket, key, answer)]))
                    entries[name] = dict(object=obj, **hashed.result(), **_version_entry(uploaded[-1][1]))
            committing = True
            put, old, read = _commit(client, bucket, prefix, manifest_name, _with_files(manifest, entries),
                                     (old, read, listed), {obj for obj, _ in uploaded}, listable, overwrite, dest,
                                     where, hint)  # the commit point
            if on_commit is not None:
                on_commit()
        except BaseException as exc:
            # before the manifest PUT nothing of ours is live; after it (failed, refused: a retry of a PUT whose
            # answer was lost is refused by its own condition) the live manifest tells
            ours = join(dest, uploaded[-1][0]) if uploaded else None
            live = _live_objects(dest, manifest_name, ours) if committing else set()
            names = {obj for obj, _ in uploaded}
            if live and names <= live and on_commit is not None:  # (a stop in the PUT whose manifest is seen live)
                on_commit()
            if committing and _may_still_land(exc):
                # the manifest PUT was sent and then abandoned (a signal, a read timeout): S3 may apply it after
                # we look, so our files stay (unreferenced ones are orphans the next publish collects); taken
                # back, a late PUT left a manifest naming deleted files, a set that could never be read again
                if not (live and names <= live) and on_undecided is not None:
                    on_undecided()
                live = None
            if live is not None and not (live & names):  # surely not committed: take ours back (by their versions)
                with contextlib.suppress(Exception):
                    delete_written(client, [(bucket, _key(prefix, obj), answer) for obj, answer in uploaded])
            if not (isinstance(exc, Exception) and live and names <= live):
                raise
            # the manifest PUT reached S3 though its answer was lost: the new set is live
    with contextlib.suppress(Exception):  # cleanup failing never turns a published set into an error
        _s3_collect(client, bucket, prefix, keep={obj for obj, _ in uploaded}, replaced=_recorded_versions(old),
                    manifest=(_key(prefix, manifest_name), read, put))
    return dest


def _version_entry(answer):
    """``{"version": id}`` of the version an upload created (its answer's), for the manifest: the file is deleted by
    it when the set is replaced or removed (versions.delete_set_object); ``{}`` where the bucket keeps none."""
    version = created_version(answer)
    return {"version": version} if version else {}


def _may_still_land(exc):
    """Whether a request that ended with ``exc`` may have reached S3 whole and be applied later: the client
    stopped waiting for the answer (a signal: not an ``Exception``; a read timeout). A reset or an HTTP error
    answer means S3 is done with it."""
    import botocore.exceptions as bex

    if s3.stopped_with_nothing_in_flight(exc):  # (between a create-only PUT S3 refused 409 and the next)
        return False
    return not isinstance(exc, Exception) or isinstance(exc, bex.ReadTimeoutError)


def _live_objects(src, manifest_name, readable=None):
    """Objects the live manifest references; ``set()`` when there is none, ``None`` when S3 cannot tell.
    ``readable``: the URI of an object we may read (one we just uploaded): if S3 serves it but refuses the
    manifest, the refusal is S3's answer for a missing key to a caller without s3:ListBucket."""
    try:
        return _referenced(read_manifest(src, manifest_name))
    except FastTextError as exc:
        if str(exc).endswith(f"has no {manifest_name}"):
            return set()
        if readable and str(exc).startswith("access denied"):
            with contextlib.suppress(Exception):
                bucket, key = split_s3(readable)
                s3_client().head_object(Bucket=bucket, Key=key)
                return set()
        return None
    except Exception:
        return None


def _remove_s3(dest, manifest_name):
    bucket, prefix = split_s3(dest)
    prefix = prefix.rstrip("/")
    client = s3_client()
    with s3_errors(dest):
        old, read, _ = _check_s3_destination(client, bucket, prefix, manifest_name, dest)
        deleted = None
        if old is not None:  # first, and plain: readers see no set (its version alone would bring back the one before)
            deleted = client.delete_object(Bucket=bucket, Key=_key(prefix, manifest_name))
        _s3_collect(client, bucket, prefix, keep=set(), replaced=_recorded_versions(old),
                    manifest=(_key(prefix, manifest_name), read, deleted))


def publish(dest, files, manifest_name, manifest, move=False, overwrite=True, hint="pass --overwrite to replace it",
            on_commit=None, on_undecided=None):
    """Publish ``files`` (logical name -> local path) and ``manifest`` at ``dest``, all or nothing.

    Returns ``dest`` (absolute for a local path). Adds ``files`` and the marker to the manifest.
    ``move=True``: the files are the caller's temporaries (a staging directory it removes afterwards);
    a local ``dest`` on their filesystem then gets them as hard links instead of copies (the data
    written once). Every other guarantee is the same: unique names, durable before the manifest,
    the manifest last. ``overwrite=False``: a set already at ``dest`` (or one a concurrent publisher
    commits first) is never replaced: "<dest>/<manifest> already exists; <hint>", nothing left behind.
    ``on_commit``: called (no arguments) as soon as the new manifest is known to be in place, before the files of the
    set it replaced are deleted: a stop after it (an exception raised out of this call) leaves the new set live. A stop
    (or its own error) between the commit and its return calls it (again) on the way out: make it safe to repeat.
    ``on_undecided``: called (no arguments) on S3 where the manifest's PUT was abandoned before S3 answered (a stop, a
    read timeout) and the new manifest is not seen in place: S3 may still apply it, or not; nobody can tell which set
    is live until it is read again.
    """
    files = {str(k): str(v) for k, v in files.items()}
    _check_files(files, manifest_name)
    with out_of_memory_naming(f"write {dest}"):  # (what was staged is taken back first, as for any failure)
        if is_s3(dest):
            return _publish_s3(str(dest), files, manifest_name, manifest, overwrite=overwrite, hint=hint,
                               on_commit=on_commit, on_undecided=on_undecided)
        return _publish_local(str(dest), files, manifest_name, manifest, move=move, overwrite=overwrite, hint=hint,
                              on_commit=on_commit)


def fetch(src, manifest, names, local_dir):
    """Copy the named files of the set at ``src`` into ``local_dir``, verifying size and sha256.

    Locally every file is opened before any is copied: a publisher that replaces the set meanwhile
    deletes the old files, but an open file stays readable, so only the instant between reading
    the manifest and opening the files can see a change (:class:`SetChanged`; read_set retries).
    Returns ``{name: local path}``.
    """
    src = str(src)
    with out_of_memory_naming(f"read {src}"):
        return _fetch(src, manifest, names, local_dir)


def _fetch(src, manifest, names, local_dir):
    entries = []
    for name in names:
        entry = manifest["files"].get(name)
        if entry is None:
            raise FastTextError(f"{src}: its manifest lists no {name}")
        entries.append((name, entry, join(src, entry["object"]), os.path.join(local_dir, name)))
    if not is_s3(src):
        return _fetch_local(src, entries)
    out = {}
    for name, entry, uri, path in entries:
        bucket, key = split_s3(uri)
        try:
            with _local_copy_errors(f"cannot write {path}"), s3_errors(uri), open(path, "wb") as fout:
                get_s3_object(bucket, key, fout.write)
        except FastTextError as exc:
            if "no such S3 object" in str(exc):  # SetChanged: read_set reads the manifest again
                raise _set_changed(src, name, entry) from None
            if str(exc).startswith("access denied") and not _found_by_head(uri):
                raise _set_changed(src, name, entry, refused=True) from None
            raise
        _verify(src, name, entry, path)
        out[name] = path
    return out


@contextlib.contextmanager
def _local_copy_errors(what):
    """A fetched file's local copy that cannot be written: one line starting with ``what``; a full TMPDIR is left to
    the staging_dir the files go to, which names it (room_in_tmpdir)."""
    try:
        yield
    except OSError as exc:
        if exc.errno in NO_ROOM:
            raise
        raise FastTextError(f"{what}: {exc.strerror or exc}") from None


def _found_by_head(uri):
    """Whether the object whose GET S3 refused (403) is there, and so refused. Without s3:ListBucket S3 answers 403
    for a missing object, to the HEAD too, and the file its manifest names may be gone: ``False``. A HEAD refused as
    well is asked of a listing: a caller that may list is told 404 for a missing object, so there a listed object
    is a real refusal (an object another account owns, a Deny on its key), not a missing file."""
    try:
        return exists(uri)
    except FastTextError as exc:
        if not str(exc).startswith("access denied"):
            raise
    bucket, key = split_s3(uri)
    try:
        listed = s3_client().list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1).get("Contents", [])
    except Exception:  # (no s3:ListBucket, or any other failure: missing or refused, it cannot be told)
        return False
    return any(o["Key"] == key for o in listed)


def _set_changed(src, name, entry, refused=False):
    said = "is missing or S3 refused it (403, its answer for a missing object without s3:ListBucket)" if refused else \
        "is missing"
    return SetChanged(f"{src}: {name} ({entry['object']}) {said}: the set was replaced or removed while reading; try again",
                      missing=(name, entry["object"]), refused=refused)


def _fetch_local(src, entries):
    sources = []
    try:
        for name, entry, uri, _ in entries:
            try:
                sources.append(open(uri, "rb"))
            except FileNotFoundError:
                raise _set_changed(src, name, entry) from None
            except OSError as exc:
                raise cannot_read(uri, exc) from None
        out = {}
        for (name, entry, uri, path), fin in zip(entries, sources):
            with _local_copy_errors(f"cannot copy {uri} to {path}"), open(path, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
            _verify(src, name, entry, path)
            out[name] = path
        return out
    finally:
        for fin in sources:
            fin.close()


def read_set(src, manifest_name, names, local_dir, attempts=8):
    """:func:`read_manifest` + :func:`fetch`, read again if a publisher replaced the set meanwhile.

    ``names``: the logical names to fetch (``None``: every file the manifest lists).
    Returns ``(manifest, {name: local path})``.
    """
    missed = None  # (the manifest read, and what its fetch raised) of the last read that found a file missing
    for attempt in range(attempts):
        last = attempt == attempts - 1
        try:
            manifest = read_manifest(src, manifest_name)  # (replaced while read, it is read again)
        except SetChanged:
            if last:
                raise
            missed = None
        else:
            if missed is not None and manifest == missed[0]:
                # The same manifest again: no publisher replaced the set (a publish writes its manifest before it
                # deletes the files of the one it replaces): the file is gone for good. It was read 8 times over 3.55 s.
                raise missed[1]
            try:
                wanted = sorted(manifest["files"]) if names is None else names
                return manifest, fetch(src, manifest, wanted, local_dir)
            except SetChanged as exc:
                if last:
                    raise
                missed = (manifest, exc)
        time.sleep(min(0.05 * 2 ** attempt, 1.0))  # let a publisher in progress finish


def remove(dest, manifest_name):
    """Delete the set at ``dest`` (manifest first); files this library did not write stay."""
    if is_s3(dest):
        _remove_s3(str(dest), manifest_name)
    else:
        _remove_local(str(dest), manifest_name)


def _check_deletable(client, bucket, key, dest, keeps_versions):
    """A set's publisher deletes what an interrupted run uploaded and a replaced set's files: s3:DeleteObject (where
    S3 cannot be asked without writing, the publish itself will tell)."""
    if _may_delete(client, bucket, key, keeps_versions) is False:
        raise FastTextError(f"cannot publish to {dest}: S3 refused to delete there (s3:DeleteObject), which is "
                            f"needed to take back an interrupted upload and the files of a replaced set; grant "
                            f"s3:DeleteObject on {bucket}")


def _check_puttable(client, bucket, probe):
    """For a role that may not delete (no s3:DeleteObject): whether S3 lets us put objects, asked by a PUT that stores
    nothing. A probe put there could not be deleted: it failed the check ("access denied", though the write itself
    needs no delete) and stayed. Conditional on an ETag that ``probe`` (no object) does not have (If-Match), the PUT is
    authorized first (403: not allowed), then refused (404, 412); asked only where s3:ListBucket is granted (without
    it S3 answers 403 for a key that is not there). Where S3 cannot tell so (a store or botocore without conditional
    PUTs), nothing is checked here: the write itself will tell. So too where reads are refused: S3 asks s3:GetObject
    of a PUT with If-Match (the ETag it compares is read), which a plain or create-only PUT does not need; its 403
    refused an upload-only role (s3:ListBucket and s3:PutObject) a write it could do. A PUT that got no answer it
    could read (a 500 after botocore's retries, a dropped connection) fails the check: it had passed, as if allowed."""
    if "IfMatch" not in _operation_members(client):
        return
    try:
        stored = client.put_object(Bucket=bucket, Key=probe, Body=b"", IfMatch='"00000000000000000000000000000000"')
    except Exception as exc:
        if is_forbidden(exc) and _readable(client, bucket, probe):
            raise
        if _status(exc) is not None and _credentials_refused(exc):
            raise
        if _status(exc) is None or (_status(exc) >= 500 and _status(exc) != 501):  # (501: a store without If-Match)
            raise _incomplete_check_error(bucket, exc) from None
        return  # refused for the condition (or a store that cannot check it): put would be allowed, or will tell
    with contextlib.suppress(Exception):  # a store that ignored the condition stored it: not left behind if we may
        # (by its version where the bucket keeps versions: a plain DELETE would leave it, hidden by a delete marker)
        client.delete_object(Bucket=bucket, Key=probe, **({"VersionId": stored["VersionId"]}
                                                          if stored.get("VersionId") else {}))
    if _found(client, bucket, probe):
        print(f"warning: could not delete s3://{bucket}/{probe}, put to check that {bucket} can be written: delete it "
              f"by hand", file=sys.stderr)


def _incomplete_check_error(bucket, exc):
    """The error (the caller raises it) for a check's PUT that failed for a reason that says nothing of the permission
    (S3's 500 or 503 after botocore's retries, a dropped connection): not passed as if allowed."""
    answer = (f"was answered {exc.response.get('Error', {}).get('Code') or 'with an error'} (HTTP {_status(exc)})"
              if _status(exc) else f"got no answer ({_endpoint_only(exc)})")
    return FastTextError(f"could not check that s3://{bucket} can be written: the check's test PUT {answer}; "
                         f"try again")


def _credentials_refused(exc):
    """Expired or unknown credentials (400 ExpiredToken, 403 InvalidAccessKeyId): said as such (s3_errors)."""
    return exc.response.get("Error", {}).get("Code") in _CREDENTIALS_REFUSED


def _readable(client, bucket, key):
    """Whether S3 lets us read ``key`` (which is not there: 404 where s3:GetObject is granted, 403 where not)."""
    try:
        client.head_object(Bucket=bucket, Key=key)
    except Exception as exc:  # noqa: BLE001
        return not is_forbidden(exc)
    return True


def _found(client, bucket, key):
    try:
        client.head_object(Bucket=bucket, Key=key)
    except Exception:  # noqa: BLE001 - gone, or not ours to see
        return False
    return True


def check_writable(dest, manifest_name=None, what=None):
    """Fail fast (before training) if ``dest`` cannot be written; with ``manifest_name``, also if it
    is a destination :func:`publish` would refuse to replace. Leaves nothing behind. ``what``: the path the
    user gave, when ``dest`` is its folder (an output file's), named in the message instead."""
    dest = str(dest)
    if is_s3(dest):
        bucket, prefix = split_s3(dest)
        prefix = prefix.rstrip("/")
        client = s3_client()
        with s3_errors(dest):
            listable = _bucket_listable(client, bucket)
            _refuse_an_object_as_folder(bucket, prefix)
            if not listable and not manifest_name:
                return  # a probe could be written but perhaps not deleted: the write itself will tell
            probe = _key(prefix, PROBE_PREFIX + secrets.token_hex(8))
            keeps_versions = _keeps_versions(client, bucket)
            if manifest_name:
                _check_s3_destination(client, bucket, prefix, manifest_name, dest)
                _check_deletable(client, bucket, probe, dest, keeps_versions)
            elif keeps_versions is False and not _may_delete(client, bucket, probe, keeps_versions):
                return _check_puttable(client, bucket, probe)  # (a write that needs no delete: sample, a plain file)
            if keeps_versions is not False:  # a probe put and deleted would stay there, as a version
                return _check_puttable(client, bucket, probe)
            try:
                client.put_object(Bucket=bucket, Key=probe, Body=b"")
            except BaseException:  # S3 may have stored it all the same (its answer lost): no probe left behind
                with contextlib.suppress(Exception):
                    client.delete_object(Bucket=bucket, Key=probe)
                raise
            client.delete_object(Bucket=bucket, Key=probe)
        return
    dest = os.path.abspath(dest)
    if manifest_name:
        _check_local_destination(dest, manifest_name)
    elif os.path.lexists(dest) and not os.path.isdir(dest):
        _refuse_a_loop(dest)
        raise FastTextError(f"{dest} exists and is not a directory")
    else:
        _check_creatable(dest)
    where = dest if os.path.isdir(dest) else os.path.dirname(dest)
    while not os.path.isdir(where):
        where = os.path.dirname(where)
    try:
        fd, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=where)
        os.close(fd)
        os.remove(probe)
    except OSError as exc:
        raise FastTextError(f"cannot write to {what or dest}: {_why_no_file(where, exc)}") from None
