"""Shell commands in errors: a file named as one word of a command a user can paste (quoted, ``./-name``), the file a
conversion writes (``new.csv``), and an S3 object's commands run on a copy brought down first (``aws s3 cp``). The
readers' refusals (lines, compressed_streams, class_folders, vec_files) say how to convert a file with these."""
import shlex

from . import storage


def shell_word(path):
    """``path`` as one word of a shell command a hint gives: quoted (a name with a space was two words), and a name
    that starts with "-" as ./-name (iconv, zstd and tar took -name.csv for their options)."""
    return shlex.quote(f"./{path}" if path.startswith("-") else path)


# The command that writes the text of each compressed format (lines.decompressed's) to stdout, for every hint that
# gives one: gzip -dc, not zcat (an older macOS's zcat reads .Z files only: it looked for reviews.csv.gz.Z), and
# --format=lzma for .lzma data (told by its header, as this reader told it, not left to xz's guess)
DECOMPRESS_COMMANDS = {"gzip": "gzip -dc", "bzip2": "bzip2 -dc", "xz": "xz -dc", "lzma": "xz -dc --format=lzma"}


def new_file(extension):
    """The file a conversion command writes: new, with the input's ``extension`` (else .txt), a shell word too (a
    name "a.c v" gave > new.c v: v was an argument)."""
    return shell_word(f"new{extension or '.txt'}")


def shell_name(uri):
    """``uri`` as a shell command in an error names it: an S3 object by its file name (:func:`copied_down` first). (A
    command quotes it: :func:`shell_word`; a name with a space split in two as pasted.)"""
    return uri.rsplit("/", 1)[-1] if storage.is_s3(uri) else uri


def copied_down(uri, command):
    """``command`` (on :func:`shell_name`'s file) as a user runs it: for an S3 object, after copying it down."""
    return f"aws s3 cp {shlex.quote(uri)} . && {command}" if storage.is_s3(uri) else command


def column_flag(flag, name):
    """``flag`` (``--label-column``, ``--text-column``) naming the column ``name`` as a command a note gives, which the
    CLI parses back to that name: quoted (a space or a quote split or ended it), and ``--flag=-name`` for a name that
    starts with "-" (argparse took ``--flag -name`` for a flag without its value)."""
    return f"{flag}={shlex.quote(name)}" if name.startswith("-") else f"{flag} {shlex.quote(name)}"


def comma_free(name):
    """A column ``name`` as --text-column can name it: its commas left out (the flag splits its value at commas, so
    ``feedback, text`` named two columns, neither of them there), its spaces as they were."""
    return " ".join(name.replace(",", " ").split())
