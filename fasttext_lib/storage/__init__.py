"""Local paths and ``s3://`` URIs behind one small API, and atomic publishing of file sets.

One module per layer, each using only those before it:

* :mod:`.s3`: ``s3://`` URIs split without URL semantics, one client per process, every S3 failure a user can
  cause as a one-line error; uploads (multipart aborted when interrupted, conditional where nothing may be replaced).
* :mod:`.files`: reading (``open_read``: S3 objects streamed by smart_open; ``read_bytes``, ``exists``, ``holds``:
  whether a file holds the bytes a ``Written`` saw, an S3 object told by its ETag where it can be), and the checks an
  output file gets before any work (``check_replaceable``, ``refuse_existing``, ``why_not_written``).
* :mod:`.versions`: what a run wrote and deletes again (staging objects, a failed publish's files) deleted by the
  version its write created, so that a bucket that keeps versions keeps none of it.
* :mod:`.atomic`: a file appears whole or not at all (``atomic_write``, ``atomic_local_file``; ``one_of_several_files``
  for files written one after the other, which a stop's line names), the private ``staging_dir``, a full TMPDIR as
  one line.
* :mod:`.pairs`: several files written together (``atomic_writes``: a train/test pair, none put in place until all
  are written; ``files.reading_together`` refuses a pair mixed by failed or concurrent writes).
* :mod:`.sets`: published sets, a model bundle or a checkpoint: ``publish``, ``read_set``, ``remove``,
  ``check_writable`` / ``check_output_file`` (fail fast before training); the guarantees are in its docstring.

The rest of the library uses the names below as ``storage.<name>``.
"""
from .s3 import (BUCKET_NAME_RULES, CONDITIONAL_PART_BYTES, COPY_OBJECT_MAX, OVERWRITE_ARGUMENT,  # noqa: F401
                 OVERWRITE_FLAG, UPLOAD_PART_BYTES, AlreadyExists, BeingWritten, Damaged, SetChanged, Unreachable, already_exists,
                 could_name_a_bucket, get_s3_object, is_bucket_name, is_forbidden, is_s3, join, prefix_uri, replace_with,
                 rerun_to_replace, s3_client, s3_errors, split_s3, upload_file)
from .files import (KERNEL_FILE_SYSTEMS, SET_ID_META, SET_MEMBERS_META, Written, check_comparable,  # noqa: F401
                    LOOP, cannot_read, check_local_input, check_replaceable, check_set_member, exists, expand_home, holds, is_a_loop,
                    flock_saying_a_wait, is_taken, local_kind, missing_file, modified_at, open_read, read_bytes, reading_together,
                    refuse_existing, remove_file, same_location, why_not_written, within, would_replace, write_target)
from .atomic import (NO_ROOM, OLD_TEMPORARY_GRACE_SECONDS, STAGING_PREFIX, atomic_local_file, atomic_write,  # noqa: F401
                     is_old_temporary_of, is_temporary_of, one_of_several_files, remove_dead_staging,
                     remove_dead_temporary, remove_stale_temporaries, room_in_tmpdir, staging_dir, temporary_file,
                     temporary_root, temporary_root_named)
from .pairs import atomic_writes, staging_key  # noqa: F401
from .versions import delete_replaced, take_back_version  # noqa: F401
from .sets import (LOCK_NAME, MARKER, MARKER_KEY, ORPHAN_GRACE_SECONDS, PROBE_PREFIX, check_output_file,  # noqa: F401
                   check_writable, fetch, publish, read_manifest, read_set, remove)
