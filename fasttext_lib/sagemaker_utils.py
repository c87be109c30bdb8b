"""The sagemaker SDK objects the library builds, with the SDK imported only when needed.

Importing ``sagemaker`` takes seconds and logs config lookups, so it stays out of module import
time. The session is built from the ambient boto3 configuration (``AWS_ENDPOINT_URL`` included)
with SDK telemetry opted out; nothing here derives a default bucket, which fails offline: every S3 location
comes from the ``bucket`` and ``prefix`` you pass. STS is called only to find an execution role not given, where
that configuration points (:func:`resolve_role`).

* :func:`make_estimator` - ``sagemaker.mxnet.MXNet`` running ``fasttext_lib/entry_point.py``
  (MXNet 1.9.0, py38) on a staged source_dir, with the training job's metric definitions (sm_train.py);
* :func:`make_tuner` - a ``HyperparameterTuner`` over lr / emsize / ngrams (or ranges the job's check takes) maximizing
  ``validation:accuracy``;
* :func:`make_model` - ``sagemaker.mxnet.MXNetModel`` serving a bundle's ``model.tar.gz`` with the
  entry point's hosting functions (sm_serve.py; JSON and JSON Lines in and out);
* :func:`delete_deployment` - delete what ``deploy()`` created, also when it failed part way.

Layout under ``s3://{bucket}/{prefix}/``: ``code/`` (uploaded source), ``jobs/`` (job outputs,
``model.tar.gz``), ``checkpoints/``, ``serving/`` (repacked model archives).
"""
import logging
import os
import re
import shutil
import tempfile
import weakref

# The SDK logs each config file it looks for, on stdout, as it is imported and on every session, unless its logger has
# a level already (sagemaker.config.config_utils). Set at this module's import, which notebooks 02 and 04 make in their
# check cell: set inside this module's functions, it came after 02's save cell had imported sagemaker.s3, whose output
# was then two "sagemaker.config INFO - Not applying SDK defaults from location: /root/.config/..." lines.
logging.getLogger("sagemaker.config").setLevel(logging.WARNING)

FRAMEWORK_VERSION = "1.9.0"
PY_VERSION = "py38"
DEFAULT_TRAINING_INSTANCE = "ml.m5.xlarge"


def _temporary_source_dir(make_sdk_object, requirements=None, prefix="fasttext-source-"):
    """``make_sdk_object(source_dir)`` on a fresh staged source_dir in the temp folder, deleted once the
    estimator or model using it is gone (or the process exits): each call left a ~600 KB copy behind."""
    from .packaging import REQUIREMENTS, stage_source_dir

    source_dir = stage_source_dir(tempfile.mkdtemp(prefix=prefix), REQUIREMENTS if requirements is None else requirements)
    try:
        sdk_object = make_sdk_object(source_dir)
    except BaseException:
        shutil.rmtree(source_dir, ignore_errors=True)
        raise
    weakref.finalize(sdk_object, shutil.rmtree, source_dir, True)
    return sdk_object


def _opted_out_config():
    """The SDK defaults config (files, as the SDK would load them) with telemetry turned off."""
    from sagemaker.config import load_sagemaker_config

    config = dict(load_sagemaker_config() or {})
    config.setdefault("SchemaVersion", "1.0")
    modules = config.setdefault("SageMaker", {}).setdefault("PythonSDK", {}).setdefault("Modules", {})
    modules["TelemetryOptOut"] = True
    return config


def sagemaker_session(default_bucket=None):
    """A ``sagemaker.Session`` on the ambient boto3 configuration, telemetry opted out.

    ``default_bucket`` is the bucket the SDK falls back on (it is never derived from the account).
    """
    import boto3
    import sagemaker

    from .notebook_errors import _drop_sdk_traceback_display

    _drop_sdk_traceback_display()  # in a notebook: the cell that imported the SDK shows its errors as errors
    boto_session = boto3.session.Session()
    if boto_session.region_name is None:  # S3 needs none: off SageMaker the notebooks ran up to here without one
        from .errors import FastTextError

        raise FastTextError("the sagemaker SDK needs an AWS region (S3 alone does not): set AWS_DEFAULT_REGION, or "
                            "region in ~/.aws/config")
    return sagemaker.Session(boto_session=boto_session, default_bucket=default_bucket,
                             sagemaker_config=_opted_out_config())


def resolve_role(role=None, session=None):
    """``role``, else ``$SAGEMAKER_ROLE``, else the notebook instance's execution role."""
    from .errors import FastTextError

    role = role or os.environ.get("SAGEMAKER_ROLE")
    if role and not isinstance(role, str):  # papermill -p role 5, -y "role: [arn...]": the SDK's TypeError, at the job
        raise FastTextError(f"role must be an IAM role's ARN (arn:aws:iam::...:role/...) or name, got {role!r}")
    if role:
        return role
    try:
        return _caller_role(session or sagemaker_session())
    except Exception as exc:  # outside SageMaker the caller identity is a user, not a role
        raise FastTextError(f"no SageMaker execution role: pass role='arn:aws:iam::...:role/...' or set SAGEMAKER_ROLE ({exc})") from None


# The hosts of AWS's own endpoints (the commercial and China partitions, the dual-stack ones).
_AWS_HOSTS = re.compile(r"(^|\.)(amazonaws\.com|amazonaws\.com\.cn|api\.aws)$")


def _caller_role(session):
    """The execution role of the caller's identity, as ``sagemaker.get_execution_role`` finds it, but asked where the
    ambient configuration sends STS calls: the SDK sends its own to AWS's regional endpoint whatever
    ``AWS_ENDPOINT_URL`` says, so off SageMaker, against a local server (make demo, the tests), a notebook's role
    lookup called AWS with the local server's credentials. Where STS is AWS's own (or on a SageMaker notebook,
    whose metadata names the role), the SDK looks it up, role path included."""
    from urllib.parse import urlparse

    import sagemaker
    from sagemaker.session import NOTEBOOK_METADATA_FILE

    sts = session.boto_session.client("sts", region_name=session.boto_region_name)
    if os.path.exists(NOTEBOOK_METADATA_FILE) or _AWS_HOSTS.search(urlparse(sts.meta.endpoint_url).hostname or ""):
        return sagemaker.get_execution_role(session)
    identity = sts.get_caller_identity()["Arn"]
    role = re.sub(r"^(.+)sts::(\d+):assumed-role/(.+?)/.*$", r"\1iam::\2:role/\3", identity)  # (the SDK's rule)
    if ":role/" not in role:
        raise ValueError(f"the caller identity {identity} is not a role")
    return role


def _s3_base(bucket, prefix):
    from . import storage
    from .errors import FastTextError

    if not bucket:
        raise FastTextError("a bucket is required: the SageMaker helpers never derive a default bucket")
    # s3://bucket made output_path s3://s3://bucket/..., found at the job's start; an older us-east-1 bucket's name
    # (capitals, underscores) passes, as the notebooks' Workspace takes it, whose check cells call these
    if not storage.could_name_a_bucket(bucket):
        raise FastTextError(f"bucket must be a bucket name such as 'my-bucket', got {bucket!r}; the folder under it "
                            f"goes in prefix")
    return storage.prefix_uri(bucket, prefix)


def _check_buckets_exist(session, *uris):
    """Refuse, in one line naming it, a bucket of ``uris`` (``s3://`` URIs; others, and ``None``, skipped) that does
    not exist: a job or model created with one failed minutes later, once its instances were running (and billed).
    A HEAD of each bucket with the session's credentials; only a missing one stops: where the check itself is
    refused (no s3:ListBucket, 403) or cannot be made, the job's own S3 access decides."""
    from . import storage
    from .storage.s3 import _no_bucket

    buckets = {storage.split_s3(str(uri))[0]: str(uri) for uri in uris if uri is not None and storage.is_s3(str(uri))}
    client = session.s3_client
    for bucket, uri in buckets.items():
        try:
            client.head_bucket(Bucket=bucket)
        except Exception as exc:  # noqa: BLE001 - anything but "no such bucket" says nothing about the bucket
            code = getattr(exc, "response", {}).get("Error", {}).get("Code")
            if code in ("404", "NoSuchBucket", "NotFound"):
                raise _no_bucket(bucket, uri) from None


def training_hyperparameters(config=None, **values):
    """Hyperparameters for the entry point: ``None`` values dropped (the entry point's default applies).

    ``config``: a :class:`~fasttext_lib.config.TrainConfig` whose settings the job trains with, except where and
    how a run shows itself (``config.RUN_ONLY``: the job picks its own devices and logs without progress bars);
    ``values`` add to or override them. ``label_names`` may be a mapping (``LabeledTexts.names``): it is sent
    inline (``1=negative,2=positive``)."""
    from .config import RUN_ONLY
    from .label_names import to_inline

    if config is not None:
        values = {**{k: v for k, v in config.to_dict().items() if k not in RUN_ONLY}, **values}
    if isinstance(values.get("label_names"), dict):
        values["label_names"] = to_inline(values["label_names"])
    return {k: v for k, v in values.items() if v is not None}


def _toolkit_argument(value):
    """How the training toolkit writes a (JSON-decoded) hyperparameter on the entry point's command line."""
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(value.items()))
    return str(value)


def _toolkit_name(name):
    """How the training toolkit writes a hyperparameter's name there: ``--name``, a one-character one ``-n``, the
    name ``""`` as ``""``."""
    return f"--{name}" if len(name) > 1 else f"-{name}" if name else ""


def _check_one_value(name, value):
    """Refuse a list or a dict (JSON-decoded) given for a hyperparameter that takes one value: the toolkit passes it on
    as text, ``['a', 'b']`` or ``a=1``, which the job read as a class column of that name (``label_column``), a folder
    (``checkpoint_dir``), a file. The ones the job reads several values of (sm_train.SEVERAL_VALUES) take theirs."""
    from .errors import FastTextError
    from .sm_train import SEVERAL_VALUES

    if not isinstance(value, (list, dict)):
        return
    kind, described = SEVERAL_VALUES.get(name.replace("-", "_"), (None, None))
    if kind is dict and isinstance(value, dict):
        return
    if kind is list and isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return
    also = f" or {described}" if described else ""
    raise FastTextError(f"hyperparameter {name} must be one value (a string, number or boolean){also}, got {value!r}: "
                        f"the job would read it as the text {_toolkit_argument(value)!r}")


def check_hyperparameters(hyperparameters):
    """Refuse now, in one line, what the entry point would refuse at the job's start (an unknown name, a value
    of the wrong kind or out of range): there the instance is already up and billed. ``hyperparameters``: as
    :func:`training_hyperparameters` returns them; each goes the way the SDK and the toolkit send it (JSON,
    then ``--name value``). A list or a dict only where the job reads several values. Settings that need the data
    or the container (label_names files, pretrained vectors, the devices ctx names being there) are left to the job;
    the kvstore's value is checked here, whether it suits the instance count in :func:`make_estimator`."""
    import json

    from .config import CONFIG_FIELDS, TrainConfig
    from .errors import FastTextError
    from .sm_train import check_unknown, known_hyperparameters, parse_hyperparameters

    decoded = {}
    for name, value in sorted(hyperparameters.items()):
        try:
            decoded[name] = json.loads(json.dumps(value))
        except (TypeError, ValueError):
            raise FastTextError(f"hyperparameter {name}: {value!r} is not a JSON value (the SDK sends each as "
                                f"JSON)") from None
    known = known_hyperparameters()
    for name, value in decoded.items():
        if str(name).replace("-", "_") in known:  # (an unknown one is refused by its name, below)
            _check_one_value(name, value)
    argv = [word for name, value in decoded.items() for word in (_toolkit_name(str(name)), _toolkit_argument(value))]
    args, ignored = parse_hyperparameters(argv)
    check_unknown(ignored)
    # ctx's value as the job checks it (config.TrainConfig: devices.check_ctx); what the instance has, only there
    TrainConfig(**{name: getattr(args, name) for name in CONFIG_FIELDS if name != "pretrained_vectors"})


def _check_kvstore(kvstore, instance_count):
    """Refuse, in one line, a kvstore the job's instances cannot train with (sm_train.plan_training refused it at the
    job's start): a ``dist_*`` one on one instance, where make_estimator starts no parameter server, another on
    several."""
    from .config import NONE_WORDS
    from .errors import FastTextError

    kvstore = str(kvstore if kvstore is not None else "auto").strip()
    if kvstore.lower() in NONE_WORDS + ("auto",):
        return
    if instance_count == 1 and kvstore.startswith("dist_"):
        raise FastTextError(f"kvstore {kvstore!r} trains on several instances (an MXNet parameter-server cluster), and "
                            f"this job has instance_count=1: leave kvstore unset (auto) or give instance_count=2 or more")
    if instance_count > 1 and not kvstore.startswith("dist_"):
        raise FastTextError(f"kvstore {kvstore!r} cannot train on {instance_count} instances; use dist_sync (or leave "
                            f"kvstore unset: auto is dist_sync on several instances)")


# What the SDK takes as an instance type (sagemaker.image_uris): ml.<family>.<size>, or its local mode's two.
INSTANCE_TYPE = re.compile(r"ml\.[a-z][a-z0-9-]*\.[a-z0-9]+|local|local_gpu")


def _check_instances(instance_type, instance_count):
    """``m5.xlarge`` (for ``ml.m5.xlarge``) passed, and the SDK refused it in a ValueError traceback when the job or
    the endpoint was made: in notebook 02 after the local training, in 04 after the model was packed and uploaded."""
    from .errors import FastTextError, check_positive_int

    if not isinstance(instance_type, str) or not INSTANCE_TYPE.fullmatch(instance_type):
        text = instance_type.strip().lower() if isinstance(instance_type, str) else ""
        meant = text if text.startswith("ml.") else f"ml.{text}"  # M5.XLARGE, m5.xlarge: ml.m5.xlarge
        hint = f" (did you mean {meant!r}?)" if text and INSTANCE_TYPE.fullmatch(meant) else ""
        raise FastTextError(f"instance_type must be a SageMaker instance type such as {DEFAULT_TRAINING_INSTANCE!r}, "
                            f"got {instance_type!r}{hint}")
    check_positive_int(instance_count, "instance_count")


def _processor(instance_type):
    """``cpu``, ``gpu``, ``inf`` or ``trn``: the SDK's reading of an instance type (sagemaker.image_uris._processor)."""
    if instance_type.startswith("local"):
        return "gpu" if instance_type == "local_gpu" else "cpu"
    family = instance_type.split(".")[1]
    if family.startswith(("inf", "trn")):
        return family[:3]
    return "gpu" if family[0] in ("g", "p") else "cpu"


_ACCELERATORS = {"inf": "an AWS Inferentia", "trn": "an AWS Trainium"}


def _check_training_instance(instance_type):
    """An Inferentia or Trainium instance: there is no MXNet training image for it, and the SDK said so only when the
    job was started (its ValueError traceback, "Unsupported framework: mxnet")."""
    from .errors import FastTextError

    processor = _processor(instance_type)
    if processor in _ACCELERATORS:
        raise FastTextError(f"instance_type {instance_type} is {_ACCELERATORS[processor]} instance, for which there is no "
                            f"MXNet {FRAMEWORK_VERSION} training image: use a CPU instance ({DEFAULT_TRAINING_INSTANCE}) "
                            f"or a GPU one (ml.g4dn.xlarge, ml.p3.2xlarge)")


def _check_image(image_uri, instance_type):
    """An ``image_uri`` whose tag names the other processor than the instance's: a CPU image on a GPU instance
    stopped the job at its start ("SM_NUM_GPUS is 1 but this job's MXNet sees 0 GPU(s)"), billed; a GPU (CUDA) image
    on a CPU instance could not start MXNet. An image whose tag says neither is the user's to know."""
    from .errors import FastTextError

    if not isinstance(image_uri, str):
        return
    tag = image_uri.rsplit("/", 1)[-1].lower()
    said = "cpu" if re.search(r"[-:_.]cpu(?=$|[-_.])", tag) else \
        "gpu" if re.search(r"[-:_.](gpu|cu\d+)(?=$|[-_.])", tag) else None
    processor = _processor(instance_type)
    if said and said != processor:
        raise FastTextError(f"image_uri {image_uri} is a {said.upper()} image, and {instance_type} a {processor.upper()} "
                            f"instance: leave image_uri out (the SDK picks the MXNet {FRAMEWORK_VERSION} image for the "
                            f"instance), or give the {processor.upper()} image")


def _check_local_session(instance_type, session):
    """``local`` / ``local_gpu`` with a session that is not the SDK's LocalSession (the default one): the SDK's
    RuntimeError traceback when the estimator was built."""
    from .errors import FastTextError

    if not instance_type.startswith("local"):
        return
    from sagemaker.local import LocalSession

    if not isinstance(session, LocalSession):
        raise FastTextError(f"instance_type {instance_type} runs the job in Docker on this machine, which needs "
                            f"session=sagemaker.local.LocalSession() (SageMaker local mode: pip install "
                            f"'sagemaker[local]'); or give a SageMaker instance type such as {DEFAULT_TRAINING_INSTANCE!r}")


def _check_environment(environment):
    """The estimator's ``environment=``, as the job starts with it: a value MXNet cannot parse (``OMP_NUM_THREADS``)
    or a bad ``FASTTEXT_CLUSTER_TIMEOUT`` stopped the job at its start, billed; a value that is not a string (3600)
    or a list of ``NAME=value`` failed CreateTrainingJob's parameter check in a botocore traceback at fit()."""
    from . import cluster
    from .errors import FastTextError
    from .mxnet_env import check_environment

    if environment is None:
        return
    if not isinstance(environment, dict):
        raise FastTextError(f"environment must be a dict of variable names to values, such as "
                            f"{{'{cluster.TIMEOUT_ENV}': '3600'}}; got {environment!r}")
    for name, value in environment.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise FastTextError(f"environment[{name!r}] must be a string (the job's environment holds text), got "
                                f"{value!r}" + (f": give '{value}'" if isinstance(value, (int, float)) else ""))
    check_environment(environment)
    cluster.timeout_from_environment(environment)


def check_training_job(bucket, prefix, hyperparameters=None, role=None, instance_type=DEFAULT_TRAINING_INSTANCE,
                       instance_count=1, session=None):
    """What :func:`make_estimator` refuses, in one line, without building an estimator: a bucket a job cannot name,
    the instances, the hyperparameters, no execution role. Notebook 02 calls it in its check cell, with
    ``use_training_job``: its job's cell, which found them, runs after the local training (minutes of it, then
    "no SageMaker execution role" on a machine with none). Returns ``(s3 base, hyperparameters as sent, session,
    role)``."""
    from .errors import FastTextError

    base = _s3_base(bucket, prefix)
    _check_instances(instance_type, instance_count)
    _check_training_instance(instance_type)
    if hyperparameters is not None and not isinstance(hyperparameters, dict):
        raise FastTextError(f"hyperparameters must be a dict of name: value, got {type(hyperparameters).__name__}")
    hyperparameters = training_hyperparameters(**{"progress": False, **(hyperparameters or {})})
    check_hyperparameters(hyperparameters)
    _check_kvstore(hyperparameters.get("kvstore"), instance_count)
    session = session or sagemaker_session(default_bucket=bucket)
    return base, hyperparameters, session, resolve_role(role, session)


def check_deployment(bucket, prefix, role=None, instance_type="ml.m5.xlarge", session=None):
    """What deploying a model (:func:`make_model`, then ``deploy(instance_type=...)``) would refuse, in one line: a
    bucket it cannot name, the endpoint's instance type, no execution role. Notebook 04 calls it in its check cell,
    with ``deploy``: its deploy cell, which found them, runs last, after packing and uploading the model. Returns
    the role."""
    _s3_base(bucket, prefix)
    _check_instances(instance_type, 1)
    return resolve_role(role, session or sagemaker_session(default_bucket=bucket))


def make_estimator(bucket, prefix, hyperparameters=None, role=None, instance_type=DEFAULT_TRAINING_INSTANCE,
                   instance_count=1, source_dir=None, session=None, checkpoint_s3_uri=None, use_spot_instances=False,
                   max_run=24 * 3600, max_wait=None, base_job_name="fasttext", **kwargs):
    """A ``sagemaker.mxnet.MXNet`` estimator for ``fasttext_lib/entry_point.py``.

    ``source_dir`` defaults to a fresh :func:`~fasttext_lib.packaging.stage_source_dir` in a temporary
    directory. Several instances train with MXNet's parameter server (``dist_sync``). Managed spot
    training needs checkpoints: ``checkpoint_s3_uri`` then defaults to
    ``s3://{bucket}/{prefix}/checkpoints/{base_job_name}``, which SageMaker syncs with
    ``/opt/ml/checkpoints``, where the entry point checkpoints and resumes. Extra keyword arguments
    go to the estimator.
    """
    from sagemaker.mxnet import MXNet

    from .sm_train import METRIC_DEFINITIONS
    from .packaging import TRAINING_ENTRY_POINT

    base, hyperparameters, session, role = check_training_job(bucket, prefix, hyperparameters, role, instance_type,
                                                              instance_count, session)
    instance_count = int(instance_count)  # a NumPy count: the SDK's request is JSON, which has no numpy.int64
    _check_image(kwargs.get("image_uri"), instance_type)
    _check_local_session(instance_type, session)
    _check_environment(kwargs.get("environment"))
    if use_spot_instances:
        checkpoint_s3_uri = checkpoint_s3_uri or f"{base}/checkpoints/{base_job_name}"
        max_wait = max_wait or max_run
    distribution = {"parameter_server": {"enabled": True}} if instance_count > 1 else None
    _check_buckets_exist(session, f"{base}/jobs", checkpoint_s3_uri)

    def estimator(source_dir):
        return MXNet(entry_point=TRAINING_ENTRY_POINT, source_dir=str(source_dir), framework_version=FRAMEWORK_VERSION,
                     py_version=PY_VERSION, role=role, instance_type=instance_type,
                     instance_count=instance_count, hyperparameters=hyperparameters, distribution=distribution,
                     metric_definitions=METRIC_DEFINITIONS, output_path=f"{base}/jobs", code_location=f"{base}/code",
                     checkpoint_s3_uri=checkpoint_s3_uri, use_spot_instances=use_spot_instances, max_run=max_run,
                     max_wait=max_wait, base_job_name=base_job_name, sagemaker_session=session,
                     disable_profiler=True, debugger_hook_config=False, **kwargs)

    return estimator(source_dir) if source_dir is not None else _temporary_source_dir(estimator)


def default_ranges(optimizer="sgd"):
    """Search space over the learning rate (log scale, around the optimizer's defaults), emsize and ngrams.

    sgd: the lr the data-derived default picks spans ~0.2-4 (docs/RESULTS.md); adam's default is 0.01."""
    from sagemaker.tuner import CategoricalParameter, ContinuousParameter, IntegerParameter

    lr = (0.001, 0.1) if optimizer == "adam" else (0.1, 4.0)
    return {"lr": ContinuousParameter(*lr, scaling_type="Logarithmic"),
            "emsize": IntegerParameter(20, 200),
            "ngrams": CategoricalParameter([1, 2, 3])}


def _check_tuner_arguments(estimator, max_jobs, max_parallel_jobs, ranges):
    """One line, before any tuning job exists, for what the SDK took and CreateHyperParameterTuningJob refused (0
    jobs, a range over a hyperparameter the job does not know), or failed on in a TypeError (a tuple for a range)."""
    from sagemaker.parameter import ParameterRange

    from .errors import FastTextError, check_positive_int
    from .sm_train import known_hyperparameters, refuse_unknown

    if not callable(getattr(estimator, "hyperparameters", None)):
        raise FastTextError(f"make_tuner needs the estimator make_estimator returns, got {estimator!r}")
    check_positive_int(max_jobs, "max_jobs")
    check_positive_int(max_parallel_jobs, "max_parallel_jobs")
    if ranges is None:
        return
    if not isinstance(ranges, dict):
        raise FastTextError(f"hyperparameter_ranges must be a dict of hyperparameter names to ranges, got {ranges!r}")
    known = known_hyperparameters()
    try:
        refuse_unknown([name for name in ranges if name not in known])
    except FastTextError as exc:
        raise FastTextError(f"hyperparameter_ranges: {exc}") from None
    for name, value in ranges.items():
        if not isinstance(value, ParameterRange):
            raise FastTextError(f"hyperparameter_ranges[{name!r}] must be a sagemaker.tuner parameter range, e.g. "
                                f"ContinuousParameter(0.1, 1), IntegerParameter(20, 200) or CategoricalParameter([1, 2]); "
                                f"got {value!r}")
    _check_range_values(_sent_hyperparameters(estimator), ranges)


# A point inside a continuous range at this fraction of it is no whole number (the fraction is irrational): a
# continuous range over an integer hyperparameter (emsize) gives trials such values, and each trial fails.
_INNER_FRACTION = (5 ** 0.5 - 1) / 2
# At most this many combinations of the ranges' values are checked together (each check parses the job's options).
_MAX_COMBINATIONS = 4096


def _sent_hyperparameters(estimator):
    """The estimator's hyperparameters as a trial's training job reads them: the SDK sends each as JSON, and the
    training toolkit decodes what decodes (a tuner's trial gets these, with the tuned ones replaced)."""
    import json

    decoded = {}
    for name, value in (estimator.hyperparameters() or {}).items():
        try:
            decoded[name] = json.loads(value)
        except (TypeError, ValueError):
            decoded[name] = value
    return decoded


def _range_text(parameter):
    from sagemaker.parameter import CategoricalParameter

    if isinstance(parameter, CategoricalParameter):
        return f"CategoricalParameter({parameter.values!r})"
    return f"{type(parameter).__name__}({parameter.min_value!r}, {parameter.max_value!r})"


def _range_values(name, parameter):
    """The values a trial may be given from ``parameter`` that decide whether the job takes them all: a categorical
    range's every value (the SDK holds them as text, and sends them so); an integer range's ends; a continuous
    range's ends and a point inside it, which is no whole number. The job's checks are bounds (lr > 0, epochs >= 1,
    dropout < 1, the table's size), so a range whose ends pass passes between them."""
    from sagemaker.parameter import CategoricalParameter, ContinuousParameter

    from .errors import FastTextError, is_number

    if isinstance(parameter, CategoricalParameter):
        return list(parameter.values)
    low, high = parameter.min_value, parameter.max_value
    if not (is_number(low) and is_number(high)) or low > high:
        raise FastTextError(f"hyperparameter_ranges[{name!r}]: {_range_text(parameter)} must go from a number to a "
                            f"number no smaller")
    if isinstance(parameter, ContinuousParameter) and low < high:
        return [low, low + (high - low) * _INNER_FRACTION, high]
    return [low, high]


def _check_range_values(static, ranges):
    """Refuse, in one line, ranges that give a trial a value the job refuses: each trial's job would fail at its start,
    one after the other, each billed (lr from -1, epochs from 0, an optimizer the job does not have). The job's own
    check (:func:`check_hyperparameters`) judges each range's values with the estimator's other hyperparameters, then
    the ranges' values together (emsize and ngrams make the table's size), so its bounds are the only ones."""
    import itertools

    from .errors import FastTextError

    values = {name: _range_values(name, parameter) for name, parameter in ranges.items()}
    try:  # (make_estimator checked them; an estimator changed since, set_hyperparameters, is named as such)
        check_hyperparameters({name: value for name, value in static.items() if name not in ranges})
    except FastTextError as exc:
        raise FastTextError(f"the estimator's hyperparameters: {exc}") from None
    for name, candidates in values.items():
        for value in candidates:
            try:
                check_hyperparameters({**static, name: value})
            except FastTextError as exc:
                whole = "expected an integer" in str(exc) and type(ranges[name]).__name__ == "ContinuousParameter"
                raise FastTextError(f"hyperparameter_ranges[{name!r}]: {_range_text(ranges[name])} gives trials "
                                    f"{name}={value!r}, which the training job refuses: {exc}"
                                    + ("; use an IntegerParameter" if whole else "")) from None
    combinations = itertools.islice(itertools.product(*values.values()), _MAX_COMBINATIONS)
    for combination in combinations if len(values) > 1 else ():
        trial = dict(zip(values, combination))
        try:
            check_hyperparameters({**static, **trial})
        except FastTextError as exc:
            shown = ", ".join(f"{name}={value!r}" for name, value in trial.items())
            raise FastTextError(f"hyperparameter_ranges: a trial with {shown} would be refused by the training job: "
                                f"{exc}") from None


def make_tuner(estimator, max_jobs=6, max_parallel_jobs=2, hyperparameter_ranges=None, strategy="Bayesian", **kwargs):
    """A ``HyperparameterTuner`` maximizing ``validation:accuracy`` (needs a ``test`` channel in ``fit``).

    The objective is read from the job log with the entry point's regex
    (:data:`fasttext_lib.sm_train.VAL_ACCURACY_REGEX`).
    """
    from sagemaker.tuner import HyperparameterTuner

    from .sm_train import OBJECTIVE_METRIC, VAL_ACCURACY_REGEX

    _check_tuner_arguments(estimator, max_jobs, max_parallel_jobs, hyperparameter_ranges)
    optimizer = str((estimator.hyperparameters() or {}).get("optimizer", '"sgd"')).strip('"')
    return HyperparameterTuner(estimator, OBJECTIVE_METRIC,
                               hyperparameter_ranges or default_ranges(optimizer),
                               metric_definitions=[{"Name": OBJECTIVE_METRIC, "Regex": VAL_ACCURACY_REGEX}],
                               objective_type="Maximize", strategy=strategy, max_jobs=max_jobs,
                               max_parallel_jobs=max_parallel_jobs, base_tuning_job_name="fasttext-tune", **kwargs)


def make_model(model_data, bucket, prefix, role=None, source_dir=None, session=None, name=None, **kwargs):
    """A ``sagemaker.mxnet.MXNetModel`` serving ``model_data`` (a bundle's ``model.tar.gz`` on S3).

    ``model_data`` may be a training job's ``model.tar.gz`` (bundle only) or packaging.pack_model's
    (bundle + ``code/``): on deploy the SDK repacks it with ``source_dir`` (default: a fresh
    :func:`~fasttext_lib.packaging.stage_source_dir` without requirements, so the endpoint installs
    nothing at start-up) as ``code/`` under ``s3://{bucket}/{prefix}/serving``.
    ``deploy()`` returns an ``MXNetPredictor``, which sends and receives JSON:
    ``endpoint.predict(["review", ...])``; ``transformer(...)`` runs Batch Transform (README: JSON Lines).
    Its environment (``env``, kept as given) sets the model server's request cap
    (serve_limits.model_server_request_bytes) unless ``env`` does.
    """
    from sagemaker.mxnet import MXNetModel

    from .packaging import SERVING_ENTRY_POINT, SERVING_REQUIREMENTS
    from .serve_limits import MODEL_SERVER_REQUEST_VARIABLE, model_server_request_bytes

    env = dict(kwargs.pop("env", None) or {})
    env.setdefault(MODEL_SERVER_REQUEST_VARIABLE, str(model_server_request_bytes(env)))

    base = _s3_base(bucket, prefix)
    session = session or sagemaker_session(default_bucket=bucket)
    role = resolve_role(role, session)
    _check_buckets_exist(session, f"{base}/serving", model_data)

    def model(source_dir):
        return MXNetModel(model_data=str(model_data), role=role, entry_point=SERVING_ENTRY_POINT,
                          source_dir=str(source_dir), framework_version=FRAMEWORK_VERSION, py_version=PY_VERSION,
                          code_location=f"{base}/serving", name=name, env=env,
                          sagemaker_session=session, **kwargs)

    if source_dir is not None:
        return model(source_dir)
    return _temporary_source_dir(model, SERVING_REQUIREMENTS, prefix="fasttext-code-")


def delete_deployment(model):
    """Delete what ``model.deploy()`` created - the endpoint, its endpoint config (named as the endpoint by
    the SDK) and the model - whichever of them exist, also when ``deploy`` failed part way (an endpoint that
    never came into service, a config without an endpoint). Returns the names deleted, as ``(kind, name)``.

    ``Predictor.delete_endpoint`` / ``delete_model`` need the predictor ``deploy`` returns, which a failed
    deploy never does: its endpoint and model would stay behind."""
    from botocore.exceptions import ClientError

    client = model.sagemaker_session.sagemaker_client
    endpoint = getattr(model, "endpoint_name", None)
    steps = []
    if endpoint:
        steps += [("endpoint", client.delete_endpoint, {"EndpointName": endpoint}),
                  ("endpoint config", client.delete_endpoint_config, {"EndpointConfigName": endpoint})]
    if getattr(model, "name", None):
        steps.append(("model", client.delete_model, {"ModelName": model.name}))
    deleted = []
    for kind, delete, name in steps:
        try:
            delete(**name)
        except ClientError as exc:  # never created: nothing to delete
            if exc.response.get("Error", {}).get("Code") != "ValidationException":
                raise
            continue
        deleted.append((kind, next(iter(name.values()))))
    return deleted
