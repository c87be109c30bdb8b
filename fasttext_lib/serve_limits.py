"""The SageMaker endpoint's size limits, from its environment (sm_serve.py reads them once, at import).

A request over :func:`max_request_bytes` is a 413 (:func:`fasttext_lib.serve_requests.body_text`), and so is an
answer over :func:`max_response_bytes` (``sm_serve.predict_fn`` and ``sm_serve.output_fn``). In a Batch Transform
container (:func:`in_batch_transform`) both follow the job: its ``MaxPayloadInMB``, and no 6 MB answer limit.
:func:`model_server_workers`: how many worker processes load the bundle at start-up, each its own copy.
"""
import os


def _positive_bytes(environ, name, default):
    """``environ[name]`` (a positive whole number of bytes), else ``default``. A bad value stops the
    endpoint at start-up with this one line in its log, rather than a bare int() error or a silent default."""
    raw = environ.get(name)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{name} must be a positive whole number of bytes, got {raw!r}")
    return value


# MaxPayloadInMB=0 is Batch Transform's "no limit" (a whole object streamed, SplitType None): the largest limit it
# takes otherwise, 100 MB, read as MiB. (The 6 MiB of an endpoint refused every file above it: a failed job.)
UNLIMITED_PAYLOAD_BYTES = 100 * 1024 * 1024


def _platform_payload_bytes(environ):
    """``SAGEMAKER_MAX_PAYLOAD_IN_MB`` (Batch Transform's ``MaxPayloadInMB``, which SageMaker sets in the
    container) in bytes, read as MiB so a mini-batch the platform sends is never refused, 0 as
    :data:`UNLIMITED_PAYLOAD_BYTES`; None when unset or unusable (the platform's variable: not ours to stop the
    endpoint over)."""
    try:
        value = int(str(environ.get("SAGEMAKER_MAX_PAYLOAD_IN_MB", "")).strip())
    except ValueError:
        return None
    if value == 0:
        return UNLIMITED_PAYLOAD_BYTES
    return value * 1024 * 1024 if value > 0 else None


def in_batch_transform(environ):
    """SageMaker sets ``SAGEMAKER_BATCH=true`` in a Batch Transform container."""
    return str(environ.get("SAGEMAKER_BATCH", "")).strip().lower() == "true"


def max_request_bytes(environ):
    """``FASTTEXT_MAX_REQUEST_BYTES``, else Batch Transform's ``MaxPayloadInMB``, else 6 MiB."""
    return _positive_bytes(environ, "FASTTEXT_MAX_REQUEST_BYTES", _platform_payload_bytes(environ) or 6 * 1024 * 1024)


# The model server's own request cap, set in the model's environment (sagemaker_utils.make_model): MMS reads it from
# this variable (the inference toolkit turns on its enable_envvars_config) over its config file.
MODEL_SERVER_REQUEST_VARIABLE = "MMS_MAX_REQUEST_SIZE"


def model_server_request_bytes(environ):
    """The request cap to give the model server (MMS, in front of the hosting functions) for a model whose environment
    is ``environ``: twice the most :func:`max_request_bytes` takes there, in Batch Transform too (whole files:
    :data:`UNLIMITED_PAYLOAD_BYTES`), at most Java's largest int. The toolkit leaves MMS at its own 6,553,500 bytes
    when ``MaxPayloadInMB`` is 0, so a whole file over that was refused before this library saw it, a 413 with an
    empty body that failed the job; and a body just over our cap was MMS's 413, not ours that says what to do."""
    batch = dict(environ, SAGEMAKER_BATCH="true", SAGEMAKER_MAX_PAYLOAD_IN_MB="0")
    return min(2 * max(max_request_bytes(environ), max_request_bytes(batch)), 2 ** 31 - 1)


# Batch Transform: SageMaker documents no response limit; the cap there only keeps a worker's memory in
# bounds (about 0.5 GB of Python objects for 100 MB of JSON Lines answers).
BATCH_RESPONSE_BYTES = 100 * 1000 * 1000


def max_response_bytes(environ):
    """``FASTTEXT_MAX_RESPONSE_BYTES``, else 6,000,000: SageMaker documents 6 MB for a real-time
    invocation's payload; read as the smaller 6 x 10^6, an answer this lets through is never refused by
    SageMaker after the work is done (serverless endpoints: 4 MB, set it lower). In a Batch Transform
    container (``SAGEMAKER_BATCH``) the default is :data:`BATCH_RESPONSE_BYTES`."""
    default = BATCH_RESPONSE_BYTES if in_batch_transform(environ) else 6 * 1000 * 1000
    return _positive_bytes(environ, "FASTTEXT_MAX_RESPONSE_BYTES", default)


# The model server's workers a model's environment sets: the inference toolkit writes this one into MMS's config
# (default_workers_per_model); MMS's own variable, read over its config file, wins.
MODEL_SERVER_WORKERS_VARIABLE = "SAGEMAKER_MODEL_SERVER_WORKERS"
_WORKERS_VARIABLES = ("MMS_DEFAULT_WORKERS_PER_MODEL", MODEL_SERVER_WORKERS_VARIABLE)


def model_server_workers(environ, gpus):
    """``(count, why, variable)``: the workers MMS starts for the model, each loading the bundle at start-up, all at
    once: the number a variable of ``environ`` sets (``variable``, the one to change), else MMS's default
    (multi-model-server 1.1 ConfigManager.getDefaultWorkers): one per GPU (``gpus``), else one per CPU this process may
    run on (Java's availableProcessors), ``variable`` the toolkit's. A value that is no positive whole number counts as
    unset, as MMS reads 0."""
    for name in _WORKERS_VARIABLES:
        try:
            count = int(str(environ.get(name, "")).strip())
        except ValueError:
            continue
        if count > 0:
            return count, f"{name}={count}", name
    if gpus:
        return gpus, f"one per GPU: {MODEL_SERVER_WORKERS_VARIABLE} is unset", MODEL_SERVER_WORKERS_VARIABLE
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cpus, f"one per vCPU: {MODEL_SERVER_WORKERS_VARIABLE} is unset", MODEL_SERVER_WORKERS_VARIABLE
