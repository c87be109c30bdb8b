"""Several files written together (a train/test pair, with its label names): none replaces an older one until all
are written. On S3 each is uploaded to a staging key and put in place by server-side copies, with a set id in each
object's metadata so that readers (files.reading_together) can refuse a pair mixed by a failed or concurrent write.
"""
import contextlib
import os
import secrets
import sys

from ..errors import FastTextError
from ..stops import note_what_a_stop_came_after, note_what_a_stop_could_not_remove, note_what_a_stop_left, stop_left
from .s3 import (OVERWRITE_FLAG, AlreadyExists, _Transfer, _copy, _first_line, _is_missing, _keeps_versions,
                 _may_delete, _operation_members, _status, _upload_new, head_object, heads_remembered, is_forbidden,
                 is_s3, may_still_create, run_again, run_again_with, s3_client, s3_errors, split_s3, upload_file)
from .files import (SET_BEFORE_META, SET_ID_META, SET_MEMBERS_META, _SET_MEMBERS_MAX, _set_of, bare_etag, exists,
                    write_target)
from .atomic import _local_writes, staging_dir
from .versions import created_version, delete_version, delete_written, say_kept


# Sets of plain files on S3 (atomic_writes: a prepared train/test pair and its names file, sample's train.csv and
# test.csv). S3 has no transaction over two objects, but a single PUT or COPY is atomic, its metadata included. So:
#
# 1. every member is uploaded (the long part: hundreds of MB) to a staging key beside its target,
#    ``.fasttext-staging-<set id>-<name>``, with the metadata ``fasttext-set: <set id>`` and ``fasttext-members``
#    (the targets' bucket/key, URL-quoted); the keys are remembered, not listed (no s3:ListBucket is needed);
# 2. only once all are uploaded, each target is replaced by a server-side COPY of its staging object, in order;
# 3. the staging objects are deleted by the keys remembered, also when anything failed (each by the version its
#    upload created, where the bucket keeps versions: versions.py).
#
# Between 2 and 3 the write checks that its targets are of one write, and copies its set again if another run's
# copies interleaved with its own (see PAIR_COPY_ATTEMPTS): two runs at once leave one run's pair, whole (or fail).
#
# A failure in 1 (a connection lost mid-upload, Ctrl-C, SIGTERM) leaves the old set untouched. Only a failure in the
# instant between two COPYs can leave targets of two sets side by side: the error says so, and files.open_read
# refuses to read a member of one set beside another member now of another write of that set, or still holding
# what its key held when the write began (its ETag, recorded in every member: ``fasttext-before``), or older than it
# and of no write of it (see files.check_set_member; a file the user put there later is read, with a warning). Objects
# are read pinned to the ETag their metadata was checked on (``If-Match``): one replaced mid-read is an error, never
# a file stitched from two.
#
# Where staging objects could not be removed afterwards (no s3:DeleteObject: a role that may only put objects) or
# not copied (no s3:GetObject), the members are uploaded to their targets directly, one after another, with the
# same metadata: a failure between two of them leaves a mixed set that readers refuse, and the error says so. Two
# such runs at once are checked as the copies are: the run that finds its targets of two writes after its uploads
# uploads its set again (PAIR_COPY_ATTEMPTS; a HEAD each, so only where s3:GetObject lets S3 show their metadata).
# ``overwrite=False`` uploads each member conditionally (If-None-Match) to its target: nothing is replaced, and a
# failure takes back (deletes) the members this call created that are still its own (their set id): not one another
# run has written its set over since (each DELETE conditional on the ETag seen: _take_back). Without s3:DeleteObject
# nothing is taken back: a run that finds a later member created by another run looks again (_Overtaken). Its
# members all created, it checks them as a replacing write does: one another run wrote over meanwhile (a run that
# failed between its copies) leaves a mixed set, said in one line (_LeftMixed). A Ctrl-C or SIGTERM once the members
# are being put in place (copies or uploads in place) says so too, in the stop's line (stops.note_what_a_stop_left);
# one amid a create-only write's creates takes back what it created (also the create it stopped, where that went in),
# and its line names what could not be (stops.note_what_a_stop_could_not_remove: no s3:DeleteObject, a DELETE refused).
# One once all are in place (during the check that follows, or the summary line) says the set was written whole
# (stops.note_what_a_stop_came_after): nothing is cleaned up then.


@contextlib.contextmanager
def atomic_writes(uris, mode="wb", overwrite=True, on_written=None, if_taken=None, overwrite_as=OVERWRITE_FLAG):
    """:func:`.atomic.atomic_write` for files that belong together (a train and a test split): yields their file
    objects; all are written in full before any replaces what is at its ``uri``, and they are put in place
    in the order given. A failure while writing them leaves every old file as it was.

    On S3 the files are one *set* (see "Sets of plain files on S3" above): every object carries the set's id
    and its members' names in its metadata, which :func:`.files.open_read` checks, so a reader never takes a file of
    one set beside its partner of another. They are uploaded to staging keys first and put in place by
    server-side copies only once all are uploaded: a failed or interrupted upload leaves the old set intact.
    Locally the files are put in place by renames, one after another. ``on_written()``: as
    :func:`.atomic.atomic_write`'s, once all are in place (after the S3 copies and the local renames; where it
    fails, the local files replaced are put back).

    ``if_taken(uri)``: without ``overwrite``, for files that may stay where they are when they hold the same bytes (a
    ``prepare`` run again, or two at once): asked of each ``uri`` found taken just before the files are put in place,
    it raises where what is there may not stay (it differs), else that file stays as it is (it is not written again:
    nothing is replaced, nor anything another run put there meanwhile). On S3, where every member is taken and all are
    of one write, nothing is written; where only some are (or they are of two writes, which readers refuse: a write
    that failed between its copies), the set is written whole again (its members must be of one write), after each
    taken one has been asked again once the uploads are done, just before the copies: from that check to the copy
    (milliseconds) a file changed by someone else is still replaced (S3 can make a copy conditional on the target's
    ETag, but the S3 servers this is tested against ignore that condition).

    ``overwrite_as``: how a refusal tells the caller's user to replace (a file created meanwhile, a set left mixed, a
    file a stop could not take back) or to write again: the command line's flag (its lines say "run the command
    again"), or the Python API's terms (``overwrite=True``: prepare's, writers'; "call it again")."""
    uris = [str(u) for u in uris]
    _refuse_one_file_twice(uris, overwrite)
    if not any(is_s3(u) for u in uris):
        with _local_writes(uris, mode, overwrite, on_written, if_taken, overwrite_as) as files:
            yield files
        return
    set_id = secrets.token_hex(8)
    metadata = _set_metadata(set_id, [split_s3(u) for u in uris if is_s3(u)])
    written = []
    with _stopped_after(written), contextlib.ExitStack() as stack:
        tmpdir = stack.enter_context(staging_dir())
        # the local members are put in place when the stack closes (their renames), after the S3 ones, and then
        # on_written is called (_local_writes: where it fails, the local files replaced are put back)
        local_uris = [u for u in uris if not is_s3(u)]
        local = dict(zip(local_uris, stack.enter_context(_local_writes(local_uris, mode, overwrite, on_written,
                                                                       if_taken, overwrite_as))))
        staged = {u: os.path.join(tmpdir, f"member-{i}") for i, u in enumerate(uris) if is_s3(u)}
        opened = {u: stack.enter_context(open(path, mode)) for u, path in staged.items()}
        yield [local.get(u) or opened[u] for u in uris]
        for f in opened.values():
            f.close()
        _put_set_in_place(uris, staged, metadata, overwrite, if_taken, overwrite_as)
        written.extend(u for u in uris if is_s3(u))  # (the local members are put in place as the stack closes)


@contextlib.contextmanager
def _stopped_after(written):
    """A Ctrl-C or SIGTERM once the members in ``written`` are all in place (S3's, as their check that follows begins,
    or once it is done: then a local member's rename, the summary line) says so in its line: "stopped and cleaned up"
    said nothing had changed, beside a set written whole (stops.note_what_a_stop_came_after)."""
    try:
        yield
    except KeyboardInterrupt as exc:
        if written and not stop_left(exc):
            note_what_a_stop_came_after(exc, f"{', '.join(written)} were written whole")
        raise


def _refuse_one_file_twice(uris, overwrite):
    """Two local members that are one file (a symbolic link to the other, or two links to one file, whose target each
    write replaces: files.write_target): the second rename replaced the first, so that train.csv held the test split
    and the training split was lost, silently."""
    seen = {}
    for uri in (u for u in uris if not is_s3(u)):
        target = write_target(uri) if overwrite else os.path.abspath(uri)
        if target in seen:
            raise FastTextError(f"cannot write {seen[target]} and {uri} together: they are one file ({target}) "
                                f"through a symbolic link; give each its own file")
        seen[target] = uri


def _set_metadata(set_id, members):
    from urllib.parse import quote

    names = ",".join(quote(f"{b}/{k}", safe="/") for b, k in members)
    return {SET_ID_META: set_id, **({SET_MEMBERS_META: names} if len(names) <= _SET_MEMBERS_MAX else {})}


def _with_before(client, targets, metadata):
    """``metadata`` with :data:`~.files.SET_BEFORE_META`: the ETag each target holds now, before the write replaces it
    (a HEAD each; "-" where there is none, "?" where S3 will not say). Left out when the members are not named (too
    long for the metadata) or it would not fit."""
    if SET_MEMBERS_META not in metadata:
        return metadata
    etags = []
    for uri in targets:
        bucket, key = split_s3(uri)
        try:
            etags.append(bare_etag(head_object(client, bucket, key).get("ETag")) or "?")
        except Exception as exc:  # noqa: BLE001 - 404: nothing there; else (403 without s3:ListBucket): not known
            code = str(getattr(exc, "response", {}).get("Error", {}).get("Code"))
            etags.append("-" if code in ("404", "NoSuchKey", "NotFound") else "?")
    recorded = ",".join(etags)
    if len(metadata[SET_MEMBERS_META]) + len(recorded) > _SET_MEMBERS_MAX:
        return metadata
    return {**metadata, SET_BEFORE_META: recorded}


def staging_key(key, set_id):
    head, _, name = key.rpartition("/")
    return (head + "/" if head else "") + f".fasttext-staging-{set_id}-{name}"


def _put_set_in_place(uris, staged, metadata, overwrite, if_taken=None, overwrite_as=OVERWRITE_FLAG):
    client = s3_client()
    targets = [u for u in uris if is_s3(u)]
    bucket = split_s3(targets[0])[0]
    with s3_errors(targets[0]):
        keeps_versions = {bucket: _keeps_versions(client, bucket)}  # (versions.delete_written: its staging objects)
        deletable = _may_delete_beside(client, *split_s3(targets[0]), keeps_versions[bucket])
    if overwrite or if_taken is None:
        return _write_set(client, targets, staged, _with_before(client, targets, metadata), overwrite, deletable,
                          keeps_versions=keeps_versions, overwrite_as=overwrite_as)
    overtaken = None
    for attempt in range(2):
        # (each target HEADed once by the checks between two writes of this run; an attempt again looks anew)
        with heads_remembered():
            try:
                taken = _taken_alike(targets, if_taken)
            except FastTextError as exc:  # (one differs: kept) where our create-only write left members of its own
                if isinstance(overtaken, _LeftMixed):  # (beside another run's file of other bytes: the set stays mixed)
                    raise overtaken from None
                if getattr(overtaken, "ours", None):
                    raise _mixed(exc, overtaken.ours, len(overtaken.ours), overwrite_as) from None
                raise
            looking_again = overtaken is not None  # (a stop while it looks again: the set it found mixed may still be)
            with _checking(targets, True, overwrite_as) if looking_again else contextlib.nullcontext():
                if len(taken) == len(targets) and _of_one_write(client, targets):
                    return  # every file there holds these bytes already, and they are read together: nothing to write
            try:  # none there: each created only if still none is there; some: the set written whole again, its own
                return _write_set(client, targets, staged, _with_before(client, targets, metadata), bool(taken),
                                  deletable, recheck=lambda: _taken_alike(targets, if_taken),
                                  after_a_mix=looking_again, keeps_versions=keeps_versions,
                                  overwrite_as=overwrite_as)
            except (AlreadyExists, _LeftMixed) as exc:  # another run created one meanwhile (two prepare runs at once),
                if attempt:  # perhaps after we had created some (_Overtaken), or wrote over one of ours: look again (of
                    raise  # our bytes, the set is written whole again)
                overtaken = exc


def _taken_alike(targets, if_taken):
    """The ``targets`` something is at, each asked of ``if_taken`` (which raises where it may not stay)."""
    taken = [uri for uri in targets if exists(uri, forbidden_is_missing=True)]
    for uri in taken:
        if_taken(uri)
    return taken


def _write_set(client, targets, staged, metadata, overwrite, deletable, recheck=None, after_a_mix=False,
               keeps_versions=None, overwrite_as=OVERWRITE_FLAG):
    """The S3 members put in place (see the top of this module); ``recheck()``: called once they are uploaded, just
    before the first of them replaces anything. ``after_a_mix``: written again after another run's write was found
    among this run's members (:func:`_checking`). ``keeps_versions``: as versions.delete_written takes it;
    ``overwrite_as``: as atomic_writes takes it."""
    if not overwrite or not deletable:
        return _upload_directly(client, targets, staged, metadata, overwrite, deletable, recheck, after_a_mix,
                                overwrite_as)
    created = []  # staging keys, by the key: deleted without a listing, each by the version its upload answered
    try:
        for uri in targets:
            bucket, key = split_s3(uri)
            temp = staging_key(key, metadata[SET_ID_META])
            created.append([bucket, temp, None])
            try:
                with s3_errors(uri):
                    created[-1][2] = upload_file(client, staged[uri], bucket, temp, metadata,
                                                 on_late=_delete_late(client, bucket, temp, keeps_versions))
            except KeyboardInterrupt as exc:
                if may_still_create(bucket, temp):  # (asked before the DELETEs: one that ends after them may be after)
                    note_what_a_stop_left(exc, f"the staging object s3://{bucket}/{temp} may still be created by its "
                                               f"upload, under way when this run stopped: delete it if it is there")
                raise
        if recheck is not None:
            recheck()
        for attempt in range(PAIR_COPY_ATTEMPTS):
            for done, ((bucket, temp, _), uri) in enumerate(zip(created, targets)):
                try:
                    with s3_errors(uri):
                        _copy(client, bucket, temp, *split_s3(uri), os.path.getsize(staged[uri]))
                except KeyboardInterrupt as exc:  # (the copy it stopped may still land: S3 has the request)
                    note_what_a_stop_left(exc, _may_be_mixed(targets, overwrite_as))
                    raise
                except FastTextError as exc:
                    if done or attempt:  # (a later attempt replaces a mixed set: it was not whole before either)
                        raise _mixed(exc, targets, done or len(targets), overwrite_as) from None
                    if not str(exc).startswith("access denied"):
                        raise
                    # no s3:GetObject on the staging object (a role that may put and delete): upload directly
                    _delete_staged(client, created, keeps_versions)
                    created = []
                    return _upload_directly(client, targets, staged, metadata, overwrite, deletable, recheck,
                                            after_a_mix, overwrite_as)
            with _checking(targets, attempt or after_a_mix, overwrite_as):
                if _of_one_write(client, targets):
                    return
    finally:
        _delete_staged(client, created, keeps_versions)
    raise _written_at_once(targets, overwrite_as)


@contextlib.contextmanager
def _checking(targets, found_mixed, overwrite_as=OVERWRITE_FLAG):
    """The check that follows a set's writes (:func:`_of_one_write`): a Ctrl-C or SIGTERM during it says the set was
    written whole where no check had found it mixed (this run's writes all went in: :func:`_stopped_after`), and
    that it may be mixed where one had (``found_mixed``: a retry after another run's copies interleaved, or after its
    create landed between ours): the set written again, the check that would have found it whole cut short, "written
    whole" had the user trust a set readers may refuse (stops.note_what_a_stop_left). ``overwrite_as``: as
    atomic_writes takes it."""
    if not found_mixed:
        with _stopped_after(targets):
            yield
        return
    try:
        yield
    except KeyboardInterrupt as exc:
        if not stop_left(exc):
            note_what_a_stop_left(exc, _may_be_mixed(targets, overwrite_as))
        raise


def _written_at_once(targets, overwrite_as):
    return FastTextError(f"{', '.join(targets)} were written by other runs at the same time, again and again, and "
                         f"their files are now of two writes (reading them together is refused): "
                         f"{run_again(overwrite_as)}, one at a time")


# After its copies (or its uploads in place: _upload_directly) a write checks that the targets are all of one write.
# Two writes to one place at once (two ``prepare`` runs) can interleave their copies, A's train, B's train, B's test,
# A's test: both succeeded, leaving a mixed set that only a reader found. The run that sees a mix copies its set
# again (its staging objects are still there; uploaded in place, it uploads it again): the last copy of all is
# followed by its run's check, so the targets end whole, one run's. Only runs that keep interleaving past these
# attempts fail, with the mix said.
PAIR_COPY_ATTEMPTS = 4


def _of_one_write(client, targets):
    """Whether the targets are all of one write: ours, or wholly another run's (ours was replaced whole)."""
    ids = _write_ids(client, targets)
    return ids is None or len(set(ids)) <= 1


def _write_ids(client, targets):
    """The set id each target's metadata holds (None: a file of no set); None where a HEAD cannot tell (gone, or not
    ours to see: readers check what they find)."""
    ids = []
    for uri in targets:
        try:
            ids.append(_set_of(head_object(client, *split_s3(uri)).get("Metadata"))[0])
        except Exception:  # noqa: BLE001
            return None
    return ids


def _delete_staged(client, created, keeps_versions=None):
    """Delete the staging objects of a set by their keys (``(bucket, key, its upload's answer)`` each), each by the
    version its upload created (versions.delete_written); what cannot be deleted is named on stderr."""
    left = [f"s3://{bucket}/{temp} ({why})" for bucket, temp, why in delete_written(client, created, keeps_versions)]
    if left:
        print(f"warning: could not delete the staging object(s) {', '.join(left)}: delete them by hand", file=sys.stderr)


def _delete_late(client, bucket, temp, keeps_versions):
    """upload_file's ``on_late`` for a staging object: S3 created it after a signal had stopped the write, which
    deleted the others (a process that lives on: a notebook's kernel)."""
    return lambda answer: _delete_staged(client, [(bucket, temp, answer)], keeps_versions)


def _may_delete_beside(client, bucket, key, keeps_versions):
    """Whether S3 lets us delete objects beside ``key``: asked of a staging key no object has (s3._may_delete). Where
    that cannot be asked without writing, as if it does: the staging objects' DELETEs will tell (named on stderr)."""
    probe = staging_key(key, "probe-" + secrets.token_hex(8))
    return _may_delete(client, bucket, probe, keeps_versions) is not False


def _upload_directly(client, targets, staged, metadata, overwrite, deletable, recheck=None, after_a_mix=False,
                     overwrite_as=OVERWRITE_FLAG):
    """Each member uploaded to its target, one after another: where staging objects could not be deleted or copied
    (see the top of this module). Replacing (``overwrite``), the run checks afterwards that its targets are of one
    write and uploads its set again if another run's uploads interleaved with its own, as the copies do
    (PAIR_COPY_ATTEMPTS); ``recheck()``: asked before each upload."""
    if not overwrite:
        return _create_each(client, targets, staged, metadata, deletable, overwrite_as)
    for attempt in range(PAIR_COPY_ATTEMPTS):
        for done, uri in enumerate(targets):
            bucket, key = split_s3(uri)
            uploading = False
            try:
                with s3_errors(uri):
                    if recheck is not None:  # (before each: a member is replaced after the earlier ones' uploads)
                        recheck()
                    uploading = True
                    upload_file(client, staged[uri], bucket, key, metadata)
            except KeyboardInterrupt as exc:
                if done or attempt or uploading:  # (the upload it stopped may still land: one PUT)
                    note_what_a_stop_left(exc, _may_be_mixed(targets, overwrite_as))
                raise
            except FastTextError as exc:
                if done or attempt:  # (a later attempt replaces a mixed set: it was not whole before either)
                    raise _mixed(exc, targets, done or len(targets), overwrite_as) from None
                raise
        with _checking(targets, attempt or after_a_mix, overwrite_as):
            if _of_one_write(client, targets):
                return
    raise _written_at_once(targets, overwrite_as)


def _create_each(client, targets, staged, metadata, deletable, overwrite_as=OVERWRITE_FLAG):
    """Each member created at its target (If-None-Match), one after another: nothing is replaced; a failure takes
    back what this write created and still holds (deletable), or says what it left (_Overtaken, _mixed). Then, as a
    replacing write does, the members are checked to be of one write (:class:`_LeftMixed`). What to do is said as
    ``overwrite_as`` (atomic_writes')."""
    created = []
    for done, uri in enumerate(targets):
        bucket, key = split_s3(uri)
        transfer = _Transfer((bucket, key))  # (its creating: once that is sent, S3 may apply it whatever its answer)
        try:
            with s3_errors(uri):
                answer = _upload_new(client, staged[uri], bucket, key, uri, metadata, overwrite_as=overwrite_as,
                                     transfer=transfer)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):  # (the line must not say "cleaned up" beside files it left)
                _take_back_after_a_stop(client, created, metadata[SET_ID_META], deletable, exc, (bucket, key, uri),
                                        transfer.creating, overwrite_as)
                raise
            if deletable:  # ours alone (created, never replaced): take them back
                _warn_not_taken_back(_take_back(client, _still_ours(client, created, metadata[SET_ID_META])))
                raise
            if done and isinstance(exc, AlreadyExists):
                raise _Overtaken(exc, [m[2] for m in _still_ours(client, created, metadata[SET_ID_META])],
                                 overwrite_as)
            if done and isinstance(exc, FastTextError):
                raise _mixed(exc, targets, done, overwrite_as) from None
            raise
        created.append((bucket, key, uri, answer))
    with _stopped_after(targets):
        ids = _write_ids(client, targets)
    if ids is not None and len(set(ids)) > 1:
        raise _LeftMixed(targets, [uri for uri, set_id in zip(targets, ids) if set_id != metadata[SET_ID_META]],
                         overwrite_as)


class _LeftMixed(FastTextError):
    """A create-only write whose members all went in, some of them written over since by another run: one that failed
    between its copies (its error says so) left its file beside ours, and this run exited 0 beside a set readers
    refuse. Nothing of ours is taken back (what stays is still no whole set). Where ``if_taken`` finds that run's files
    of our bytes (two prepare runs of one dataset, the other perhaps still copying), the set is written whole again
    instead (atomic_writes: _put_set_in_place). What to do is said as ``overwrite_as`` (atomic_writes')."""

    def __init__(self, targets, theirs, overwrite_as=OVERWRITE_FLAG):
        one = len(theirs) == 1
        super().__init__(f"{', '.join(theirs)} {'was' if one else 'were'} written over by another run after this one "
                         f"created {'it' if one else 'them'}, so {', '.join(targets)} are now a mixed set, of two writes "
                         f"(reading them together is refused); this run replaced nothing: "
                         f"{run_again_with(overwrite_as)} to write them whole")


class _Overtaken(AlreadyExists):
    """A create-only write (no s3:DeleteObject: nothing it created can be taken back) found a later member taken
    after creating the earlier ones. Most likely another ``prepare`` run found them holding its own bytes and wrote
    its set whole over them (members are written in order: what it wrote at the taken one, it wrote over ours
    before): then every member is that run's, and this run may pass where they hold its bytes (``if_taken``, asked
    again). ``ours``: the members still of this write (their set id; one S3 will not show counts as ours), beside
    one of another: a mixed set, said in the message (what to do as ``overwrite_as``: atomic_writes')."""

    def __init__(self, exc, ours, overwrite_as):
        super().__init__(str(_mixed(exc, ours, len(ours), overwrite_as) if ours else exc))
        self.ours = ours


def _still_ours(client, created, set_id):
    """Of the members this write created, those it may take back: not one another run has written over since (a
    ``prepare`` that found it holding its own bytes writes its set whole over it: atomic_writes' ``if_taken``), told
    by the set id in its metadata. One S3 will not show (no s3:GetObject) is taken back, as ours. Each as
    ``(bucket, key, uri, etag, version)``: the ETag its HEAD saw (None where refused), and the version its create
    made (None where the bucket keeps none), for :func:`_take_back`."""
    ours = []
    for bucket, key, uri, answer in created:
        etag = None
        try:
            head = client.head_object(Bucket=bucket, Key=key)
            if _set_of(head.get("Metadata"))[0] != set_id:
                continue
            etag = head.get("ETag")
        except Exception as exc:  # noqa: BLE001 - gone already: nothing to take back; refused: ours, as far as known
            if _is_missing(exc):
                continue
        ours.append((bucket, key, uri, etag, created_version(answer)))
    return ours


def _take_back_after_a_stop(client, created, set_id, deletable, stop, stopped, sent, overwrite_as):
    """A Ctrl-C or SIGTERM (``stop``) amid a create-only write's creates: what it created taken back, and the create it
    stopped too (``stopped``: bucket, key, uri) where S3 shows that it went in all the same (one PUT, its answer not
    read). What stays (no s3:DeleteObject: nothing is taken back; a DELETE refused) is told to the stop's line
    (stops.note_what_a_stop_could_not_remove), which said "stopped and cleaned up" beside it. So is a create that
    was ``sent`` and is not seen there (yet): S3 may apply it after this run has gone (a slow S3 answering late),
    and the file stood there alone after a line that said "stopped and cleaned up". How to replace them is said as
    ``overwrite_as`` (atomic_writes')."""
    landed, unseen = _landed(client, *stopped, set_id)
    ours = _still_ours(client, created, set_id) + landed
    left = _take_back(client, ours) if deletable else [(uri, "access denied") for _, _, uri, *_ in ours]
    if left:  # (_may_delete's DELETE was refused: s3:DeleteObject is not granted)
        note_what_a_stop_could_not_remove(stop, left, run_again_with(overwrite_as))
    if sent and unseen:
        note_what_a_stop_left(stop, f"{stopped[2]} may still be created by its upload, under way when this run "
                                    f"stopped: delete it if it is there, or {run_again_with(overwrite_as)}")


def _landed(client, bucket, key, uri, set_id):
    """The member whose create was stopped, as :func:`_still_ours` gives it, where a HEAD shows it of this write (its
    set id), else none; and whether it is unseen: not there (yet), or not ours to see. A file of another write there
    is not ours to delete, and ours will not be created over it (If-None-Match)."""
    try:
        head = client.head_object(Bucket=bucket, Key=key)
    except Exception:  # noqa: BLE001
        return [], True
    ours = _set_of(head.get("Metadata"))[0] == set_id  # (then so is the version the HEAD saw: its create's)
    return ([(bucket, key, uri, head.get("ETag"), created_version(head))] if ours else []), False


def _warn_not_taken_back(left):
    if left:
        print(f"warning: could not take back {', '.join(f'{uri} ({why})' for uri, why in left)}, written by this "
              f"failed run: delete them by hand", file=sys.stderr)


def _take_back(client, ours):
    """Delete the members :func:`_still_ours` found still this write's, each only while it holds the ETag its HEAD
    saw (DeleteObject's If-Match; S3 answers 412 otherwise): a file put there in between with other bytes (an edited
    names file, a run with --overwrite) is kept. The window is not closed for a file of the same bytes (another
    ``prepare`` run's set written whole over ours, which it does only where the bytes are the same): an ETag is the
    MD5 of the bytes, and both are alike, so that run's member is deleted and its set read as a mix (refused) until
    written again. Nor where the HEAD was refused, or botocore or the store cannot delete conditionally (NotImplemented):
    the DELETE is plain there. Where the bucket keeps versions, the version the create made is deleted instead (a
    DELETE without it only hid the file behind a delete marker; that version is ours whatever is there since): the
    conditional DELETE only where S3 refuses that (no s3:DeleteObjectVersion), said on stderr
    (versions.say_kept). Returns what could not be deleted, (uri, why) each."""
    conditional = "IfMatch" in _operation_members(client, "DeleteObject")  # (a botocore without it: plain deletes)
    left, kept = [], []
    for bucket, key, uri, etag, version in ours:
        condition = {"IfMatch": etag} if etag and conditional else {}
        try:
            if version and delete_version(client, bucket, key, version):
                continue
            kept += [uri] if version else []
            try:
                client.delete_object(Bucket=bucket, Key=key, **condition)
            except Exception as exc:
                if not condition or getattr(exc, "response", {}).get("Error", {}).get("Code") not in ("NotImplemented",
                                                                                                     "501"):
                    raise
                client.delete_object(Bucket=bucket, Key=key)
        except Exception as exc:
            if _status(exc) == 412:  # replaced since its HEAD, with other bytes: not ours, kept
                continue
            left.append((uri, "access denied" if is_forbidden(exc) else _first_line(exc)))
    say_kept([uri for uri in kept if uri not in {u for u, _ in left}])
    return left


def _may_be_mixed(targets, overwrite_as):
    """What a Ctrl-C (or SIGTERM) left, said in its error line (cli.main), once a write has begun putting its members in
    place: some replaced, perhaps the one in flight too, the others not. What to do as ``overwrite_as`` (atomic_writes')
    tells: the command line's user runs the command again, the Python API's calls it again."""
    return (f"{', '.join(targets)} may now be a mixed set, of two writes (reading them together is refused): "
            f"{run_again(overwrite_as)}")


def _mixed(exc, uris, done, overwrite_as):
    # Already replaced, the earlier files cannot be taken back: say so, or the user reads the failure as "nothing
    # changed"; readers refuse the mixed set (open_read) until it is written again (as ``overwrite_as`` tells how).
    return FastTextError(f"{exc}; {', '.join(uris[:done])} had already been written, so the files written together "
                         f"no longer belong together (reading them together is refused): {run_again(overwrite_as)}")
