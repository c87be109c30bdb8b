"""Files SageMaker runs: the code directory, the endpoint's ``model.tar.gz``, and back.

No sagemaker SDK here (sagemaker_utils.py builds the SDK objects); these are plain files:

* :func:`stage_source_dir` - one code directory for both containers: ``fasttext_lib/`` (the
  training entry point is ``fasttext_lib/entry_point.py``), copies of the entry point at the top
  (``entry_point.py``, the module ``SAGEMAKER_PROGRAM`` names, and ``inference.py``, the toolkit's
  default) and, for a training job, a ``requirements.txt`` the toolkit pip-installs first. It is the training job's ``source_dir`` (the
  repository root is not suitable: the SDK would upload ``.venv``, notebooks and tests too) and
  ``code/`` in ``model.tar.gz``; an estimator's own ``deploy()`` repacks it as it is, so that works too.
* :func:`pack_model` - ``model.tar.gz`` in the layout the MXNet inference containers expect: the
  bundle files at the top level (the container extracts them to ``/opt/ml/model``, the
  ``model_dir`` of ``model_fn``) and ``code/`` as above. Written atomically, locally or to S3, and
  only for a bundle the endpoint can load (one holding inf or NaN parameters is refused first).
* :func:`fetch_job_model` - a training job's ``model.tar.gz`` back into an ordinary bundle.
"""
import gzip
import os
import shutil
import tarfile
import zlib

from . import storage
from .errors import FastTextError, refuse_standard_output
from .stops import note_what_a_stop_came_after, note_written, telling_stops

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
TRAINING_ENTRY_POINT = "fasttext_lib/entry_point.py"  # relative to the source_dir
SERVING_ENTRY_POINT = "entry_point.py"  # relative to code/ in model.tar.gz (SAGEMAKER_PROGRAM)
# The module the inference toolkit imports when the model sets no SAGEMAKER_PROGRAM (a plain Model,
# boto3 or the console): the same thin entry point under that name.
DEFAULT_SERVING_MODULE = "inference.py"
CODE_DIR = "code"
# What the 1.9.0-py38 MXNet training container lacks, pip-installed before the job runs. The image
# ships gluonnlp 0.10.0 (pinned here, so pip finds it satisfied and the dependency is explicit),
# tqdm, pandas, matplotlib and the sagemaker SDK, but no smart_open (s3:// reads).
REQUIREMENTS = ("gluonnlp==0.10.0", "smart_open[s3]")
# Serving needs nothing the inference image lacks (serving imports only the standard library,
# numpy, mxnet, gluonnlp and this package: tests/test_sagemaker.py checks it), so the endpoint's
# code/ has no requirements.txt: the toolkit then runs no pip at start-up, and an endpoint without
# internet access (VPC without NAT, network isolation) starts.
SERVING_REQUIREMENTS = ()


SUBPACKAGES = ("storage",)  # fasttext_lib's own packages, copied with it


def _package_files():
    """The package's source files, as paths relative to it (``storage/s3.py``)."""
    # .cc: the native CPU operators (bag_ops.py), compiled on the instance on first use
    names = []
    for folder in ("",) + SUBPACKAGES:
        names += sorted(os.path.join(folder, n) for n in os.listdir(os.path.join(PACKAGE_DIR, folder))
                        if n.endswith((".py", ".cc")))
    if "entry_point.py" not in names:
        raise FastTextError(f"{PACKAGE_DIR} has no entry_point.py: is fasttext_lib installed completely?")
    return names


def _copy_package(dest):
    target = os.path.join(dest, "fasttext_lib")
    if os.path.exists(target):
        shutil.rmtree(target)
    for folder in SUBPACKAGES:
        os.makedirs(os.path.join(target, folder))
    for name in _package_files():
        shutil.copy2(os.path.join(PACKAGE_DIR, name), os.path.join(target, name))


def _prepare_dir(dest):
    dest = os.path.abspath(str(dest))
    if os.path.isfile(dest):
        raise FastTextError(f"expected a directory but got a file: {dest}")
    os.makedirs(dest, exist_ok=True)
    return dest


def stage_source_dir(dest, requirements=REQUIREMENTS):
    """Write the code directory to ``dest`` (created, or refreshed); returns its absolute path.

    ``requirements``: the lines of ``requirements.txt`` (none: no file), :data:`REQUIREMENTS` for a
    training job, :data:`SERVING_REQUIREMENTS` for an endpoint.

    Training: ``MXNet(source_dir=dest, entry_point=TRAINING_ENTRY_POINT)``; the container runs
    ``python fasttext_lib/entry_point.py --key value ...`` with ``dest`` as its cwd. Serving:
    ``MXNetModel(source_dir=dest, entry_point=SERVING_ENTRY_POINT)``; the SDK's repack copies
    ``dest`` to ``code/`` as it is.
    """
    dest = _prepare_dir(dest)
    _copy_package(dest)
    for name in (SERVING_ENTRY_POINT, DEFAULT_SERVING_MODULE):
        shutil.copy2(os.path.join(PACKAGE_DIR, "entry_point.py"), os.path.join(dest, name))
    requirements_txt = os.path.join(dest, "requirements.txt")
    if requirements:
        with open(requirements_txt, "w") as f:
            f.write("".join(f"{r}\n" for r in requirements))
    elif os.path.exists(requirements_txt):
        os.remove(requirements_txt)
    return dest


def _fetch_bundle(src, local_dir):
    """The bundle at ``src`` (verified) in ``local_dir`` as published: ``[(stored name, local path)]``."""
    import json

    from .bundle import stored_names
    from .bundle_format import CONFIG
    from .bundle_read import load_bundle_files
    from .devices import parse_ctx
    from .predict import Predictor

    config, paths = load_bundle_files(src, local_dir)  # one-line errors for a missing or foreign bundle
    # Loaded as the endpoint's model_fn will load it, before anything is written: a bundle it would refuse
    # (inf/NaN parameters, files that do not fit config.json) is refused here with the same one line.
    Predictor.from_files(str(src), config, paths, parse_ctx("cpu")[0])
    manifest = os.path.join(local_dir, CONFIG)
    with open(manifest, "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    by_object = {config["files"][name]["object"]: path for name, path in paths.items()}
    return [(name, manifest if name == CONFIG else by_object[name]) for name in stored_names(config)]


# (a Stop: one line in a notebook, 04's deploy cell; one whose upload S3 may still apply says so, atomic_write's note)
@telling_stops(lambda bundle, dest, *_, **__: f"stopped by the user while packing the bundle {bundle} into {dest}; "
               f"nothing was written there (an earlier archive is as it was); run the cell again to pack it",
               done=lambda bundle, dest, *_, **__: f"stopped by the user once the bundle {bundle} was packed into "
               f"{dest}")
def pack_model(bundle, dest, requirements=SERVING_REQUIREMENTS):
    """Pack the bundle at ``bundle`` (directory or ``s3://`` prefix) into ``model.tar.gz`` at ``dest``.

    Layout: the bundle as published (``config.json`` and the data files it lists, see bundle_format.py)
    at the top, then ``code/`` (:func:`stage_source_dir` with :data:`SERVING_REQUIREMENTS`:
    ``entry_point.py`` and ``inference.py``, so it serves with or without ``SAGEMAKER_PROGRAM``). ``dest`` is a
    local path or ``s3://`` URI ending in ``.tar.gz`` or ``.tgz``, written atomically (nothing appears there if
    anything fails).
    Returns ``dest``.
    """
    from .bundle import refuse_a_file_of

    refuse_standard_output(dest, "dest", "model.tar.gz", "a file")
    _check_archive_name(dest)
    with storage.staging_dir() as tmp:
        files = os.path.join(tmp, "bundle")
        os.makedirs(files)
        members = _fetch_bundle(bundle, files)
        # written over the bundle's config.json (or params), the archive destroyed the model it packs
        refuse_a_file_of(str(dest), str(bundle), [name for name, _ in members], "write model.tar.gz elsewhere")
        code = stage_source_dir(os.path.join(tmp, CODE_DIR), requirements)
        written = []  # (on S3: the archive, once S3 answered its upload)
        try:
            with storage.atomic_write(str(dest), "wb", written=written) as f:
                with tarfile.open(fileobj=f, mode="w:gz") as tar:
                    for name, path in members:
                        tar.add(path, arcname=name, filter=_normalize_member)
                    tar.add(code, arcname=CODE_DIR, filter=_normalize_member)
        except KeyboardInterrupt as stop:
            # a Stop once S3 has the archive (as the write's staging folder goes): the cell's "once packed" line,
            # where atomic_write's own "stopped after <dest> was written" is the only line of another caller
            if written and not note_written():
                note_what_a_stop_came_after(stop, f"{dest} was written")
            raise
        note_written()  # (a Stop as the staging folder goes: the archive is in place)
    return str(dest)


ARCHIVE_NAME_ENDINGS = (".tar.gz", ".tgz")


def _check_archive_name(dest):
    """Before the bundle is read: an empty ``dest`` said "cannot write : it is a directory" (the working directory),
    and one named ``x.zip`` (or without an ending) got a gzipped tar under that name, which no zip tool opened."""
    if not str(dest).strip():
        raise FastTextError("dest is empty: give the file to write model.tar.gz to (a local path or s3:// URI ending "
                            "in .tar.gz)")
    if not str(dest).lower().endswith(ARCHIVE_NAME_ENDINGS):
        raise FastTextError(f"dest {str(dest)!r}: pack_model writes a gzipped tar archive (SageMaker's model.tar.gz); "
                            f"give a name ending in .tar.gz or .tgz")


def _normalize_member(info):
    # No owner names or build-machine uids in the archive; skip bytecode caches.
    if "__pycache__" in info.name.split("/") or info.name.endswith(".pyc"):
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if info.isdir() else 0o644  # readable whoever the serving container runs as
    return info


# A damaged archive: tarfile's own errors, and those of the gzip stream under it (a download cut short ends
# in EOFError, a corrupted one in zlib.error or gzip.BadGzipFile; not any OSError: a full disk is no bad archive).
_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile)


def fetch_job_model(model_data, dest):
    """Turn a ``model.tar.gz`` (a training job's ``model_data``; local or ``s3://``) into a bundle at ``dest``.

    Only the bundle's own files are taken from the archive (``config.json`` and the files it lists;
    anything else, ``code/`` included, is ignored); they are verified against their checksums and
    published like :func:`~fasttext_lib.bundle.save_bundle` (the same refusals and guarantees).
    Returns the bundle's location, loadable with :meth:`Predictor.load`.
    """
    import json

    from .bundle import publish_bundle
    from .bundle_format import CONFIG
    from .bundle_read import load_bundle_files

    refuse_standard_output(dest, "dest", "the bundle", "a directory")
    model_data = str(model_data)
    with storage.staging_dir() as tmp:
        archive = os.path.join(tmp, "model.tar.gz")
        with storage.open_read(model_data, "rb") as fin, open(archive, "wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        extracted, verified = os.path.join(tmp, "extracted"), os.path.join(tmp, "verified")
        os.makedirs(extracted)
        os.makedirs(verified)
        try:
            with tarfile.open(archive, "r:*") as tar:
                members = {os.path.normpath(m.name).lstrip("/"): m for m in tar.getmembers() if m.isfile()}
                if CONFIG not in members:
                    raise FastTextError(f"{model_data} holds no model bundle (no {CONFIG} at its top level)")
                with tar.extractfile(members[CONFIG]) as fin:
                    raw = fin.read()
                try:
                    # every file config.json lists: the data files and a compact bundle's embedding_rows.npz
                    # (the default --compact auto writes one), which load_bundle_files then finds missing
                    wanted = [entry["object"] for entry in (json.loads(raw).get("files") or {}).values()]
                except (ValueError, AttributeError, TypeError, KeyError):
                    wanted = []  # load_bundle_files below names what is wrong with it
                with open(os.path.join(extracted, CONFIG), "wb") as fout:
                    fout.write(raw)
                for name in wanted:
                    if not isinstance(name, str) or "/" in name or name.startswith(".") or name not in members:
                        continue  # a missing file is reported by load_bundle_files
                    with tar.extractfile(members[name]) as fin, open(os.path.join(extracted, name), "wb") as fout:
                        shutil.copyfileobj(fin, fout, 1 << 20)
        except _ARCHIVE_ERRORS as exc:
            # one line: tarfile's "could not be opened" lists each compression it tried, a line each
            reason = (str(exc).splitlines() or [""])[0].rstrip(":") or type(exc).__name__
            raise FastTextError(f"{model_data} is not a readable model.tar.gz (cut short, or not a gzipped tar "
                                f"archive: {reason})") from None
        try:
            config, paths = load_bundle_files(extracted, verified)
        except FastTextError as exc:
            # named as in the archive: the staging folder it was extracted to is gone once this returns
            reason = str(exc).replace(f"{extracted}{os.sep}", "").replace(f"{extracted}: ", "").replace(extracted, "the archive")
            raise FastTextError(f"{model_data} holds no model bundle ({reason})") from None
        manifest = {k: v for k, v in config.items() if k not in ("files", storage.MARKER_KEY)}
        return publish_bundle(dest, manifest, paths)
