"""Shared fixtures: a real S3 endpoint (moto's server mode on 127.0.0.1) and small datasets.

Clients are pointed at the server through the standard ``AWS_ENDPOINT_URL`` variable, so boto3,
smart_open and the sagemaker SDK all exercise their real HTTP code paths.
"""
import contextlib
import functools
import io
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from unittest import mock

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A suite started in the background by a shell without job control (`make test &`, a CI step's `cmd &`) inherits
# SIGINT ignored (POSIX), and so does every process it starts: the tests of Ctrl-C (a stop while the command starts,
# a notebook's Stop) then sent a signal nothing could receive, and failed for the way the suite was started. Ctrl-C
# is made deliverable again here, in pytest and (a Python handler becomes the default on exec) in its children.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from local_s3 import free_port, local_s3  # noqa: E402,F401  (free_port: for the tests)
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
import fasttext_lib  # noqa: E402,F401  before any test module imports mxnet: under NumPy >= 1.24 it restores
#                    the NumPy aliases MXNet 1.9 imports (fasttext_lib/__init__.py)


def _check_the_sagemaker_config_schema_once():
    """The sagemaker SDK validates its config with ``jsonschema.validate``, which first checks the SDK's (constant,
    large) schema against the JSON Schema meta-schema: ~0.3 s CPU per Session, estimator, model or config lookup,
    dozens per test of test_sagemaker. That schema is checked once per process here; every config is still
    validated against it on every call, with the same errors. Other schemas go through jsonschema as before."""
    import jsonschema

    real, validators = jsonschema.validate, []

    def validate(instance, schema, cls=None, *args, **kwargs):
        config = sys.modules.get("sagemaker.config.config_schema")
        if config is None or schema is not config.SAGEMAKER_PYTHON_SDK_CONFIG_SCHEMA or cls or args or kwargs:
            return real(instance, schema, cls, *args, **kwargs)
        if not validators:
            checked = jsonschema.validators.validator_for(schema)
            checked.check_schema(schema)
            validators.append(checked(schema))
        error = jsonschema.exceptions.best_match(validators[0].iter_errors(instance))
        if error is not None:
            raise error

    jsonschema.validate = validate


_check_the_sagemaker_config_schema_once()


def server_port():
    """A free port for a server that another process binds seconds from now (a cluster's scheduler, importing MXNet;
    moto's server), outside the kernel's ephemeral range. free_port's, one the kernel picked and let go, could be
    picked again meanwhile by any bind to port 0 or outgoing connection on the machine: a cluster's worker, whose
    ps-lite picks its own port so, took its scheduler's, received the other worker's registration and aborted
    ('Check failed: is_scheduler_'), and the other waited for it until the test's deadline."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):  # (no such file: not Linux)
        return free_port()
    pick = random.SystemRandom()
    for _ in range(100):
        port = pick.randrange(max(1024, low // 2), low)
        claim = _claimed(port)
        if claim is None:
            continue
        with contextlib.suppress(OSError), socket.socket() as s:
            s.bind(("", port))  # (free on every interface, as the scheduler binds it)
            _CLAIMS.append(claim)
            return port
        claim.close()
    return free_port()


# server_port's claims, held while this process lives (closed by its exit, however it ends).
_CLAIMS = []


def _claimed(port):
    """An abstract Unix socket named for ``port``, or None where another process holds it: a port server_port picked
    is free only until its server binds it, seconds later, and two test processes (xdist's workers, another session's
    tests) picking at once from the same 16 thousand ports could both find it free and give it to two clusters."""
    claim = socket.socket(socket.AF_UNIX)
    try:
        claim.bind(f"\0fasttext-lib-tests-server-port-{port}")
    except OSError:
        claim.close()
        return None
    return claim


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 server on 127.0.0.1 for the whole session (scripts/local_s3.py, as make demo uses)."""
    with local_s3() as endpoint:
        yield endpoint


@pytest.fixture
def s3_proxy(s3_server, monkeypatch):
    """The S3 server behind a FaultProxy (scripts/fault_proxy.py: its log holds every request, its rules refuse
    some), the client pointed at it; botocore retries once, so a rule that fails every attempt fails the call."""
    from fault_proxy import FaultProxy

    with FaultProxy(s3_server) as p:
        monkeypatch.setenv("AWS_ENDPOINT_URL", p.endpoint)
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
        yield p


@pytest.fixture
def s3_bucket(s3_server):
    import boto3

    name = "test-" + uuid.uuid4().hex[:12]
    boto3.client("s3").create_bucket(Bucket=name)
    return f"s3://{name}"


class PolicyS3:
    """A moto server in its own process that enforces IAM policies (``s3_policy_server``).

    ``env(user)``: the environment for a child process acting as ``user``; ``client(user)``: a boto3 S3
    client. ``admin`` may do anything; ``putter`` may only put objects into ``bucket`` (s3:PutObject on
    ``bucket/*``: no s3:ListBucket, no s3:GetObject, no s3:DeleteObject), a common upload-only policy;
    ``writer`` may put, get and delete objects (in any bucket: a missing bucket is then named as such, as S3
    does) but list nothing (no s3:ListBucket): put it behind a FaultProxy answering 403 for missing keys, as
    S3 does for such a caller (moto says 404). ``aborter`` is ``writer`` with s3:AbortMultipartUpload; ``lister`` is
    ``writer`` with s3:ListBucket (objects listed, but no s3:ListBucketMultipartUploads, no s3:AbortMultipartUpload);
    ``uploads_lister`` is ``lister`` with s3:ListBucketMultipartUploads (uploads listed, none aborted).
    """

    POLICIES = {"admin": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
                "putter": [{"Effect": "Allow", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::{bucket}/*"}],
                "writer": [{"Effect": "Allow", "Action": ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"],
                            "Resource": "arn:aws:s3:::*/*"}],
                "aborter": [{"Effect": "Allow", "Action": ["s3:PutObject", "s3:GetObject", "s3:DeleteObject",
                                                           "s3:AbortMultipartUpload"], "Resource": "arn:aws:s3:::*/*"}],
                "lister": [{"Effect": "Allow", "Action": ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"],
                            "Resource": "arn:aws:s3:::*/*"},
                           {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::*"}],
                "uploads_lister": [{"Effect": "Allow", "Action": ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"],
                                    "Resource": "arn:aws:s3:::*/*"},
                                   {"Effect": "Allow", "Action": ["s3:ListBucket", "s3:ListBucketMultipartUploads"],
                                    "Resource": "arn:aws:s3:::*"}]}

    def __init__(self, endpoint, bucket):
        import json

        import boto3

        self.endpoint, self.bucket, self.keys = endpoint, bucket, {}
        setup = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
        boto3.client("s3", **setup).create_bucket(Bucket=bucket)
        iam = boto3.client("iam", **setup)
        for user, statements in self.POLICIES.items():
            iam.create_user(UserName=user)
            document = json.dumps({"Version": "2012-10-17", "Statement": statements}).replace("{bucket}", bucket)
            iam.put_user_policy(UserName=user, PolicyName="only", PolicyDocument=document)
            key = iam.create_access_key(UserName=user)["AccessKey"]
            self.keys[user] = (key["AccessKeyId"], key["SecretAccessKey"])

    def env(self, user):
        key_id, secret = self.keys[user]
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": key_id, "AWS_SECRET_ACCESS_KEY": secret,
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_MAX_ATTEMPTS": "1"}

    def client(self, user):
        import boto3

        key_id, secret = self.keys[user]
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1", aws_access_key_id=key_id,
                            aws_secret_access_key=secret)


@pytest.fixture(scope="session")
def s3_policy_server():
    """moto's server with IAM enforcement on (its own process: the setting is global to a moto process, and
    the session's s3_server must stay open to everyone). Users and policies are made first, then moto's
    reset-auth endpoint turns enforcement on for every later request."""
    import urllib.request

    port = server_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120  # (moto's import alone takes seconds, and a loaded machine's more than 30)
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "moto's server did not start"
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}"
        policy = PolicyS3(endpoint, "policy-" + uuid.uuid4().hex[:12])
        urllib.request.urlopen(urllib.request.Request(endpoint + "/moto-api/reset-auth", data=b"0", method="POST",
                                                      headers={"Content-Type": "text/plain"}), timeout=30).read()
        yield policy
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory):
    """The built-in synthetic corpus, small: train.csv / test.csv in Zhang CSV format."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_csv
    from fasttext_lib.synthetic import generate_reviews

    out = tmp_path_factory.mktemp("sample")
    data = generate_reviews(4400, seed=3)
    write_csv(LabeledTexts(data.labels[:4000], data.texts[:4000]), str(out / "train.csv"))
    write_csv(LabeledTexts(data.labels[4000:], data.texts[4000:]), str(out / "test.csv"))
    return out


@pytest.fixture
def no_pause_between_rereads(monkeypatch):
    """storage's read_set reads a set again while a file its manifest names is missing and the manifest it reads
    again is another one (a publisher replacing the set), up to 8 times, pausing 0.05 s, doubling up to 1 s, between
    reads; the same manifest again says the file is missing at once, after one pause. In a test whose file stays
    missing (no publisher runs), that pause (and any after a manifest the test itself changes) waits for nothing;
    here it is skipped, and every read, and what the last one says, stays the same. (The module's one use of time.)"""
    import time

    from fasttext_lib.storage import sets

    class NoPause:
        def __getattr__(self, name):
            return getattr(time, name)

        @staticmethod
        def sleep(seconds):
            pass

    monkeypatch.setattr(sets, "time", NoPause())


@pytest.fixture
def no_backoff_between_botocore_retries(monkeypatch):
    """botocore sleeps before it retries a failed request (a random fraction of a second, doubling with each attempt:
    ~0.5 s on average before the first retry). Tests that inject S3 faults on purpose retry many requests: the
    retries, and what comes of them, are under test; the wait before each is not. Here it is skipped (only botocore's
    endpoint, where it sleeps before a retry, sees a sleep that returns at once; ``time`` is untouched elsewhere)."""
    import time
    import types

    import botocore.endpoint

    monkeypatch.setattr(botocore.endpoint, "time", types.SimpleNamespace(**{**vars(time), "sleep": lambda seconds: None}))


@pytest.fixture
def no_pause_between_smart_open_rereads(monkeypatch):
    """smart_open reads the rest of a body cut midway again after a pause (1, 2, 4, 8, 16 s: a second before the
    first). Tests that cut a read on purpose: the reads again, and what comes of them, are under test; the pause before
    each is not. Here it is skipped (smart_open.s3 alone sees a sleep that returns at once)."""
    import time
    import types

    import smart_open.s3

    monkeypatch.setattr(smart_open.s3, "time", types.SimpleNamespace(**{**vars(time), "sleep": lambda seconds: None}))


@pytest.fixture
def tmpfs(tmp_path):
    """A real tiny tmpfs (as root chmod does not stop writes, so read-only and full need a real mount).

    ``tmpfs(size)`` mounts one under ``tmp_path`` and returns its path; read-only: ``remount_ro(path)``."""
    mounted = []

    def mount(size="64k"):
        where = tmp_path / f"mnt{len(mounted)}"
        where.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True).returncode:
            pytest.skip("cannot mount a tmpfs here (needs root); the ENOSPC/read-only cases need a real filesystem")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount_ro(where):
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def assert_rebuilt_for_other_flags(module, first, monkeypatch):
    """``module.build()`` with another flag names another library in the same cache and compiles it: the
    compiler is asked for it once, with that flag. (A stand-in compiler that only creates the output: a
    second real compile of the library costs half a minute and proves nothing more.)"""
    from fasttext_lib import native_build

    commands = []

    def compile_nothing(cmd, **kwargs):
        commands.append(cmd)
        open(cmd[cmd.index("-o") + 1], "wb").close()
        return subprocess.CompletedProcess(cmd, 0, "")

    monkeypatch.setattr(module, "CXXFLAGS", module.CXXFLAGS + ["-DFASTTEXT_TEST_FLAG"])
    monkeypatch.setattr(native_build.subprocess, "run", compile_nothing)
    other = module.build()
    assert other != first and os.path.isfile(other) and os.path.dirname(other) == os.path.dirname(first)
    assert len(commands) == 1 and "-DFASTTEXT_TEST_FLAG" in commands[0]


@functools.lru_cache(maxsize=None)
def _generated_reviews(n_docs, seed, num_classes):
    from fasttext_lib.synthetic import generate_reviews

    data = generate_reviews(n_docs, num_classes=num_classes, seed=seed)
    return tuple(data.labels), tuple(data.texts)


def synthetic_reviews(n_docs, seed, num_classes=2):
    """``generate_reviews(n_docs, num_classes=num_classes, seed=seed)``, generated once per test process for each
    arguments, each call given lists of its own. The generator is deterministic (same arguments, same corpus, byte
    for byte), and drawing its 30,000 pseudo-words alone takes ~0.7 s: a parametrized test that made its corpus
    for every case spent seconds on the same documents. The tests of the generator itself call it, not this."""
    from fasttext_lib.data import LabeledTexts

    labels, texts = _generated_reviews(n_docs, seed, num_classes)
    return LabeledTexts(list(labels), list(texts))


def make_splits(n_train, n_test, seed):
    """A synthetic (train, validation) pair of LabeledTexts."""
    from fasttext_lib.data import LabeledTexts

    data = synthetic_reviews(n_train + n_test, seed=seed)
    return (LabeledTexts(data.labels[:n_train], data.texts[:n_train]),
            LabeledTexts(data.labels[n_train:], data.texts[n_train:]))


# What the rules form a <br /> from (text.FORMED_BREAKS): squeezed whitespace, ; and : turned into spaces, and a line
# break taken out of the middle of another (and the invisible characters dropped under that rule, text.INVISIBLE, and
# the zero-width space read as a space; the variation selectors and direction marks text.MARKS drops); random texts
# of them: test_text_and_data's and test_native_features'.
PIECES_OF_FORMED_BREAKS = ["<br", "<br>", "<br/>", "<br />", "/>", ">", "<", " ", ";", ":", '"', "'", ".", "(", "a",
                           "B", "\u2019", "\u201c", "e\u0301", "\t", "br", "/", "  ", "\ufeff", "\u00ad", "\u200b",
                           "\u2060", "\ufe0f", "\u200f", "\u202e", "\U000e0100", "\u061c", "\u2066", "\u0301", "Σ"]


def random_texts_of_line_break_pieces(n, seed=0):
    """``n`` texts of 1 to 8 :data:`PIECES_OF_FORMED_BREAKS` each, the same for a seed."""
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES_OF_FORMED_BREAKS) for _ in range(rng.randint(1, 8))) for _ in range(n)]


def _older_text_rule(meta):
    meta["unicode_normalization"] = "NFC-tokens"  # (before typographic quotes were read as ASCII ones)
    meta["config"]["min_count"] = 2  # (where the data fingerprint cannot tell: refused whatever the data)


def _no_validation(meta):
    meta["validation"] = None


def _validated(meta):
    meta["validation"] = "tokens-sha256:" + "0" * 64  # (checkpoints.DATA_FINGERPRINT)


# Checkpoints a run cannot resume, for a reason known without its data (each refused before the data is read):
# name -> (the edit of the newest checkpoint.json, whether the run has validation data, the run's settings (its
# --flags; hyperparameters), what the refusal says). The checkpoint was written without validation data.
UNRESUMABLE_BEFORE_READING = {
    "validation added": (_no_validation, True, {}, "was written without validation data: "),
    "validation dropped": (_validated, False, {}, "was validated on validation data this run lacks: "),
    "other number of workers": (lambda meta: meta.update(num_workers=2), False, {},
                                "was written by 2 worker(s) and this run has 1: "),
    "train_accuracy scored": (lambda meta: meta.update(score_train=True), False, {},
                              "was written with train_accuracy (score_train=True): "),
    "text rule unknown": (lambda meta: meta.update(unicode_normalization="NFC-tokens-v9"), False, {},
                          "was written by a run that read text in Unicode form 'NFC-tokens-v9', "),
    "older text rule, min_count 2": (_older_text_rule, False, {"min_count": 2},
                                     "was written by an older version of this library, which read typographic "
                                     "quotes"),
    "older data fingerprint": (lambda meta: meta.update(data="0" * 64), False, {},
                               "was written by an older version of this library, whose fingerprint of the "
                               "training data did not cover"),
    "epoch edited": (lambda meta: meta.update(epoch=meta["epoch"] + 1), False, {},
                     "is inconsistent (its epoch, its directory's name and its history disagree"),
    "history not a list": (lambda meta: meta.update(history="edited"), False, {},
                           "checkpoint.json's 'history' is not a list of objects (edited by hand?)"),
}


def edit_checkpoint(epoch_dir, edit):
    """``edit`` (an :data:`UNRESUMABLE_BEFORE_READING` entry's) applied to ``epoch_dir``'s checkpoint.json."""
    marker = epoch_dir / "checkpoint.json"
    meta = json.loads(marker.read_text())
    edit(meta)
    marker.write_text(json.dumps(meta))


def params_of(trained):
    """Every parameter of a trained model as numpy, by name."""
    return {k: v.data().asnumpy() for k, v in trained.model._collect_params_with_prefix().items()}


def save_as_before_the_rule_was_recorded(trained, where, monkeypatch):
    """save_bundle as the library wrote bundles before vocab.json recorded the text rule (bundle.vocabulary_json)."""
    from fasttext_lib import bundle
    from fasttext_lib.bundle import save_bundle

    with monkeypatch.context() as old:
        old.setattr(bundle, "vocabulary_json", lambda featurizer: featurizer.vocab.to_json())
        return save_bundle(trained, where)


def as_an_older_writer_left_it(where, logical, damage):
    """Republish the bundle at ``where`` with its file ``logical`` changed by ``damage(path)``, checksums
    matching: what a writer without today's checks published (not corruption in transit)."""
    from fasttext_lib.bundle import publish_bundle

    with open(os.path.join(where, "config.json")) as f:
        config = json.load(f)
    staged = os.path.join(os.path.dirname(where), "staged-" + logical)
    with open(os.path.join(where, config["files"][logical]["object"]), "rb") as fin, open(staged, "wb") as fout:
        fout.write(fin.read())
    damage(staged)
    paths = {name: os.path.join(where, entry["object"]) for name, entry in config["files"].items()}
    paths[logical] = staged
    publish_bundle(where, {k: v for k, v in config.items() if k not in ("files", "written_by")}, paths)


# Training files a user can get wrong, and what the one-line error says (read_labeled, the CLI and
# the SageMaker training job all report them).
BAD_TRAINING_FILES = [
    (b"", "empty"),
    (b"\n\n", "empty"),
    (b"__label__1 ok\nno label here\n", r":2: line has no __label__"),
    (b"__label__1 ok\n__label__\n", "empty label"),
    (b"just some text\n", "cannot detect the format"),
    (b'"1","ok"\n"2\n', "malformed CSV"),
    (b'"1"\n', "malformed CSV row"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not"),
    (b"__label__1 caf\xe9\n", "not UTF-8"),
]


EXIT_PROBE = "modules at exit:"


# The venv's editable install of fasttext_lib is a meta-path finder (a .pth file adds it) that answers any
# fasttext_lib.<name> its parent package's folder lacks, from the checkout: a process standing for a SageMaker
# container found a subpackage its staged code did not have (fasttext_lib/storage/), and passed where the container
# fails. Such a process gets this in its sitecustomize (after .pth files, before any import of fasttext_lib).
HIDE_EDITABLE_INSTALL = ("import sys\n"
                         "sys.meta_path[:] = [f for f in sys.meta_path\n"
                         "                    if not getattr(f, '__module__', '').startswith('__editable__')]\n")


def exit_modules_probe(directory, staged_only=False):
    """A ``sitecustomize`` for child processes, in ``directory`` (put it on their PYTHONPATH): at exit
    the process prints which top-level packages it holds imported (``modules_at_exit`` reads them).
    ``staged_only``: and the editable install is hidden (:func:`staged_only_site`)."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "sitecustomize.py"), "w") as f:
        f.write((HIDE_EDITABLE_INSTALL if staged_only else "") + "import atexit, sys\n"
                f"atexit.register(lambda: sys.stderr.write({EXIT_PROBE!r} + ' ' + ' '.join(sorted("
                "m for m in sys.modules if '.' not in m)) + '\\n'))\n")
    return str(directory)


def staged_only_site(directory):
    """A ``sitecustomize`` in ``directory`` (put it on the PYTHONPATH of a process standing for a container, after
    its code) that hides the editable install: fasttext_lib is imported from the staged code alone, or not at all."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "sitecustomize.py"), "w") as f:
        f.write(HIDE_EDITABLE_INSTALL)
    return str(directory)


def modules_at_exit(stderr):
    lines = [line for line in stderr.splitlines() if line.startswith(EXIT_PROBE)]
    assert lines, "the process did not report its modules at exit"
    return set(lines[-1][len(EXIT_PROBE):].split())


def run_cli(*args, env=None, input=None, cwd=None, timeout=600):
    """Run ``python -m fasttext_lib`` in a subprocess, as a user would (``cwd``: in that directory)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "fasttext_lib", *map(str, args)], capture_output=True, text=True,
                          env=full_env, input=input, timeout=timeout, cwd=cwd)


def cli_in_process(*args, input=None):
    """``fasttext_lib.cli.main`` in this process, answered like :func:`run_cli` (returncode, stdout,
    stderr): for the cases where the command's answer is under test, not the process around it (an
    MXNet import per case). Keep one ``run_cli`` per error path family for the process itself."""
    from fasttext_lib.cli import main

    out, err = io.StringIO(), io.StringIO()
    stdin = io.TextIOWrapper(io.BytesIO(input if isinstance(input, bytes) else (input or "").encode()))
    with mock.patch.object(sys, "stdin", stdin), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
    return subprocess.CompletedProcess(args, code or 0, out.getvalue(), err.getvalue())


def cli_in_process_with(env, *args, input=None):
    """:func:`cli_in_process` with the environment variables ``env`` set (``None``: as they are) for the call only,
    as :func:`run_cli`'s ``env`` sets them for its process (storage.s3_client makes a client for each environment)."""
    with mock.patch.dict(os.environ, env or {}):
        return cli_in_process(*args, input=input)


def as_user(monkeypatch, policy, user):
    """Act as ``policy``'s ``user`` (its credentials and endpoint in the environment)."""
    for key, value in policy.env(user).items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def unlisted(s3_policy_server, monkeypatch):
    """``(policy, proxy, dest)``: acting as the ``writer`` user (put, get, delete; no s3:ListBucket) through a
    proxy that answers a missing key with 403, as S3 does for such a caller; ``dest`` is a fresh prefix."""
    policy = s3_policy_server
    from fault_proxy import FaultProxy

    with FaultProxy(policy.endpoint) as proxy:
        for method in ("GET", "HEAD"):
            proxy.fail(method, r".", "403-if-missing")
        as_user(monkeypatch, policy, "writer")
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        yield policy, proxy, f"s3://{policy.bucket}/{os.urandom(6).hex()}/model"


def machine_with_memory(monkeypatch, tmp_path, available_kb, total_kb=1_000_000):
    """fasttext_lib.devices sees a machine with ``available_kb`` of memory available and no swap (a /proc/meminfo
    of its own) and no container limit: the memory checks' view of a small machine, whatever this one has."""
    from fasttext_lib import devices

    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemTotal: {total_kb} kB\nMemAvailable: {available_kb} kB\nSwapFree: 0 kB\n")
    monkeypatch.setattr(devices, "_MEMINFO", str(meminfo))
    monkeypatch.setattr(devices, "_CGROUP_MEMORY", ())


@pytest.fixture(scope="module")
def small_train_file(tmp_path_factory):
    """A CSV of 1,500 seeded synthetic reviews: a training run of a few seconds (checkpoint and stop tests)."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.synthetic import generate_reviews
    from fasttext_lib.writers import write_csv

    data = generate_reviews(1500, seed=3)
    path = tmp_path_factory.mktemp("small") / "train.csv"
    write_csv(LabeledTexts(data.labels, data.texts), str(path))
    return path


def interrupted_at_the_stall(proxy, write):
    """``write()`` under the CLI's stop_on_signals, Ctrl-C'd as soon as the proxy holds one of its requests
    (``proxy.fail(..., "stall")``); returns the Interrupted it raised, the request still held.

    Python runs a signal's handler in the main thread, and only between its bytecodes: a request made in the caller's
    (main) thread (a set's manifest PUT; a create-only PUT was, before it had a transfer thread) waits there for S3's
    answer, and where the kernel handed the SIGINT to another thread (the proxy's, this one), or it came as that thread
    was entering its read, the read was not cut short and the handler ran once it ended, at the client's read timeout:
    a minute, now and then. A signal that does nothing (SIGURG, ignored
    unhandled) is sent to the main thread until it has raised: it ends such a read (EINTR), and the SIGINT's handler
    runs then."""
    import threading

    main, raised_yet = threading.main_thread().ident, threading.Event()

    def interrupt():
        assert proxy.stalled.wait(120)
        os.kill(os.getpid(), signal.SIGINT)
        while not raised_yet.wait(0.2):
            signal.pthread_kill(main, signal.SIGURG)
    before = signal.signal(signal.SIGURG, lambda signum, frame: None)  # (a handler: an ignored signal ends no read)
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        return _interrupted(write)
    finally:
        raised_yet.set()
        signal.signal(signal.SIGURG, before)  # (one sent after this is ignored: SIGURG's default)


def _interrupted(write):
    """The Interrupted that ``write()``, run under the CLI's stop_on_signals, raises (a test's stop: it must raise
    one)."""
    from fasttext_lib.stops import Interrupted, stop_on_signals

    with pytest.raises(Interrupted) as raised:
        with stop_on_signals():
            write()
    return raised.value


def stopped_at_the_stall(proxy, write):
    """:func:`interrupted_at_the_stall`; then S3 answers the held request (the process lives on, as a notebook's
    kernel does) and the abandoned transfer ends."""
    stopped = interrupted_at_the_stall(proxy, write)
    proxy.release()
    wait_for_abandoned_transfers()
    return stopped


def wait_for_abandoned_transfers(timeout=60):
    """Until the transfer threads that signals abandoned (s3._in_thread) have ended, and with them every request
    of theirs. Not Thread.join: Python 3.11's join, once a signal's exception interrupted it, has marked the still
    running thread stopped (is_alive() False, join() returns at once); it is listed until it really ends."""
    import threading

    deadline = time.monotonic() + timeout
    while any(t.name == "fasttext-s3-transfer" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "an abandoned transfer did not end"
        time.sleep(0.05)


def _an_abandoned_transfer():
    """Whether an S3 transfer under way has been abandoned by its caller (a stop: storage.s3's _TRANSFERS)."""
    from fasttext_lib.storage import s3

    with s3._TRANSFERS_LOCK:
        return any(transfer.abandoned for transfer in s3._TRANSFERS.values())


def stopped_at_a_put(event, write, key=""):
    """``write()`` under the CLI's stop_on_signals, Ctrl-C'd as botocore emits ``event`` for its first PutObject of a
    key ending in ``key`` (``before-parameter-build``: before the request goes out; ``after-call``: once S3 has
    answered it), in whichever thread sends it: a transfer's thread is held there until the caller has stopped waiting
    for it (in the caller's own thread the signal's handler raises there). Returns the Interrupted it raised, once the
    transfer has ended."""
    import threading
    from urllib.parse import unquote, urlsplit

    from fasttext_lib import storage

    released, fired, events = threading.Event(), [], storage.s3_client().meta.events

    def stop(params=None, http_response=None, **kwargs):
        put = (params or {}).get("Key") or unquote(urlsplit(getattr(http_response, "url", "")).path)
        if not fired and put.endswith(key):
            fired.append(event)
            os.kill(os.getpid(), signal.SIGINT)
            # held until the caller has stopped waiting for it: gone past the block, or abandoned the transfer (whose
            # take-back then waits for it: a take-back of the same key waited out the minute below, 60 s a run)
            deadline = time.monotonic() + 60
            while not released.wait(0.05) and time.monotonic() < deadline and not _an_abandoned_transfer():
                pass
    events.register(f"{event}.s3.PutObject", stop, unique_id="tests-stopped-at-a-put")
    try:
        stopped = _interrupted(write)
    finally:
        released.set()
        events.unregister(f"{event}.s3.PutObject", unique_id="tests-stopped-at-a-put")
    wait_for_abandoned_transfers()
    assert fired == [event]
    return stopped


def held_once_there(path):
    """Code (a ``sitecustomize``'s, or a wrapper's before it runs the CLI: :data:`CLI_AFTER_IT`) that holds a training
    run at its next step once ``path`` exists (a checkpoint.json: written whole), until the process is killed. A test
    that kills a run once a file is there, looking every few hundredths of a second, found it only after the run had
    gone on for epochs, or ended, where a loaded machine kept the test from looking. (``stops.raise_if_interrupted``,
    which train calls at every step, bound as train imports it.)"""
    return ("import os as _os, time as _time\n"
            "import fasttext_lib.stops as _stops\n"
            "_real_check = _stops.raise_if_interrupted\n"
            "def _held():\n"
            f"    if _os.path.exists({str(path)!r}):\n"
            "        _time.sleep(600)\n"
            "    _real_check()\n"
            "_stops.raise_if_interrupted = _held\n")


CLI_AFTER_IT = "import sys\nfrom fasttext_lib.cli import run\nsys.exit(run())\n"


def zstd_frame(data):
    """``data`` as one zstd frame (RFC 8878) of one raw block, as ``zstd -c`` writes incompressible data: the magic,
    a frame header descriptor (0x20: a single segment, its content size in one byte), that size, the block's header
    (the last block, raw, its size) and ``data``. (``zstd -d`` decodes it; built here, not by the zstd program, which
    a machine may lack.)"""
    assert len(data) < 256
    return b"\x28\xb5\x2f\xfd\x20" + bytes([len(data)]) + (len(data) << 3 | 1).to_bytes(3, "little") + data


def ole2_header():
    """The 512-byte header of an OLE2 compound file (MS-CFB 2.2), an Excel 97-2003 .xls workbook's start: its magic,
    a zero CLSID, minor version 0x3E, major version 3, byte order FE FF, sector shift 9 (512 bytes), mini sector shift
    6, and the rest zero (its tables, not read)."""
    head = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16) + b"\x3e\x00\x03\x00\xfe\xff\x09\x00\x06\x00")
    return head + bytes(512 - len(head))


def gzipped_with_extra(data):
    """``data`` gzipped as bgzip (BGZF) writes it: its header's extra field (FEXTRA) one subfield, ``BC`` and the
    block's size less one, then raw deflate data and gzip's trailer."""
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = compressor.compress(data) + compressor.flush()
    size = 18 + len(deflated) + 8  # (the fixed header 12, the subfield 6)
    header = b"\x1f\x8b\x08\x04" + bytes(4) + b"\x00\xff" + b"\x06\x00" + b"BC\x02\x00" + (size - 1).to_bytes(2, "little")
    return header + deflated + zlib.crc32(data).to_bytes(4, "little") + len(data).to_bytes(4, "little")


def gzipped_with_unfilled_extra(data):
    """``data`` gzipped with an extra field (FEXTRA, XLEN 4) whose one subfield's LEN (9) overruns it: not RFC 1952,
    but Python's gzip module (and zlib) read it, skipping XLEN bytes; then raw deflate data and gzip's trailer."""
    import gzip
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = compressor.compress(data) + compressor.flush()
    header = b"\x1f\x8b\x08\x04" + bytes(4) + b"\x00\xff" + b"\x04\x00" + b"AB\x09\x00"
    made = header + deflated + zlib.crc32(data).to_bytes(4, "little") + len(data).to_bytes(4, "little")
    assert gzip.decompress(made) == data  # (a gzip file as the gzip module reads it)
    return made
