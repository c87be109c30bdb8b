"""The SageMaker endpoint's hosting functions: ``model_fn``, ``input_fn``, ``predict_fn``, ``output_fn``.

The MXNet inference toolkit imports ``entry_point`` (which re-exports these) from
``/opt/ml/model/code``; see :func:`fasttext_lib.packaging.pack_model`. The toolkit refuses a
``transform_fn`` next to ``input_fn``/``predict_fn``/``output_fn`` and, without ``transform_fn``,
accepts only a Gluon ``Block`` (or Module) from ``model_fn``. So :func:`model_fn` returns the
classifier block with the loaded :class:`~fasttext_lib.predict.Predictor` (vocabulary, n-gram
settings, labels) attached, and the three functions below do the rest:

* request ``application/json`` (a string, a list of strings or ``{"instances": [...]}``),
  ``text/plain`` (one review per line) or ``text/csv`` (one review per record);
* response ``application/json``: ``[{"label": "positive", "probability": 0.97, "class_id": "2"}, ...]``,
  one per review, whenever the ``Accept`` header admits it (``*/*``, ``application/*``, lists,
  q-values). ``{"instances": [...], "configuration": {"k": 3, "threshold": 0.1}}`` (BlazingText's
  shape; both keys optional) answers a list of up to k classes per review instead, most probable
  first, those below the threshold left out. ``label`` is the class's name when the bundle stores one (label_names.py), else the
  raw label; ``class_id`` is always the raw label, as the training data wrote it;
* bad requests raise :class:`RequestError`, which the toolkit answers with its 4xx status: 415 for
  another content type, 406 when ``Accept`` excludes JSON, 413 above :data:`MAX_REQUEST_BYTES`, 400
  for bad JSON (also nested too deeply) or CSV, non-UTF-8 bodies, non-string items, text with lone
  surrogates and requests without any text.

Non-UTF-8 bodies: the toolkit itself decodes a body as UTF-8 before ``input_fn`` when the
Content-Type is exactly ``application/json`` or ``text/csv`` (its ``UTF8_TYPES``), and answers a
body that fails with 500; no user function runs, so none can turn that into a 400. With any
parameter (``text/csv; charset=utf-8``) or ``text/plain`` the bytes reach :func:`input_fn`, which
decodes them with the request's charset and answers 400 when they do not decode.

Serving imports neither the training modules nor tqdm (the inference containers have no tqdm):
tests/test_architecture.py checks it.
"""
import csv
import http
import io
import json
import os

from .errors import FastTextError

JSON_TYPE, TEXT_TYPE, CSV_TYPE = "application/json", "text/plain", "text/csv"
CONTENT_TYPES = (JSON_TYPE, TEXT_TYPE, CSV_TYPE)


def max_request_bytes(environ):
    """``FASTTEXT_MAX_REQUEST_BYTES`` (a positive whole number of bytes), else 6 MiB. A bad value stops the
    endpoint at start-up with this one line in its log, rather than a bare int() error or a silent default."""
    raw = environ.get("FASTTEXT_MAX_REQUEST_BYTES")
    if raw is None:
        return 6 * 1024 * 1024
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"FASTTEXT_MAX_REQUEST_BYTES must be a positive whole number of bytes, got {raw!r}")
    return value


# SageMaker's real-time InvokeEndpoint payload limit; FASTTEXT_MAX_REQUEST_BYTES (model env) changes
# it, e.g. for batch transform with a larger MaxPayloadInMB.
MAX_REQUEST_BYTES = max_request_bytes(os.environ)

try:  # the inference toolkit turns these into an HTTP response with their status code
    from sagemaker_inference.errors import BaseInferenceToolkitError as _ToolkitError
except ImportError:  # outside the container (tests, local use): the same shape
    class _ToolkitError(Exception):
        def __init__(self, status_code, message, phrase):
            self.status_code, self.message, self.phrase = status_code, message, phrase
            super().__init__(status_code, message, phrase)


class RequestError(_ToolkitError):
    """A bad request, answered with ``status_code`` (4xx) and a one-line ``message``."""

    def __init__(self, status_code, message):
        super().__init__(status_code, message, http.HTTPStatus(status_code).phrase)

    def __str__(self):
        return f"{self.status_code} {self.phrase}: {self.message}"


def _serving_ctx(context):
    import mxnet as mx

    num_gpus = mx.context.num_gpus()
    if num_gpus == 0:
        return "cpu"
    properties = getattr(context, "system_properties", None) or {}
    gpu_id = properties.get("gpu_id") or 0
    return f"gpu:{int(gpu_id) % num_gpus}"


# model_dir -> the loaded block. The MXNet toolkit's HandlerService calls model_fn twice at start-up
# (once to pick its transformer, once more through it): a large bundle is read and built once.
_LOADED = {}


def _bundle_stamp(model_dir):
    """What tells a bundle in place from a replaced one (a local config.json's identity)."""
    try:
        st = os.stat(os.path.join(str(model_dir), "config.json"))
    except OSError:  # s3:// or no bundle yet: Predictor.load reports it
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def model_fn(model_dir, context=None):
    """Load the bundle in ``model_dir``; return the Gluon block with ``.predictor`` (and its parts) attached.

    Loaded once per ``model_dir`` and device; later calls return the same block.
    """
    from .predict import Predictor

    ctx = _serving_ctx(context)
    key = (os.path.abspath(str(model_dir)) if "://" not in str(model_dir) else str(model_dir), ctx)
    stamp = _bundle_stamp(model_dir)
    cached = _LOADED.get(key)
    if cached is not None and stamp is not None and cached[0] == stamp:
        return cached[1]
    predictor = Predictor.load(model_dir, ctx=ctx)
    block = predictor.model
    block.predictor = predictor
    block.featurizer, block.labels, block.names = predictor.featurizer, predictor.labels, predictor.names
    _LOADED[key] = (stamp, block)
    return block


def _media_type(header):
    """``'text/csv; charset=utf-8'`` -> (``'text/csv'``, ``'utf-8'``)."""
    parts = [p.strip() for p in str(header).split(";")]
    charset = "utf-8"
    for param in parts[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    return parts[0].lower(), charset


def _body_text(body, charset):
    if body is None:
        body = b""
    if isinstance(body, str):
        raw_size = len(body.encode("utf-8"))
    elif isinstance(body, (bytes, bytearray, memoryview)):
        raw_size = len(body)
    else:
        raise RequestError(400, f"unexpected request body of type {type(body).__name__}")
    if raw_size > MAX_REQUEST_BYTES:
        raise RequestError(413, f"request body has {raw_size} bytes; the limit is {MAX_REQUEST_BYTES}")
    if isinstance(body, str):
        return body
    try:
        return bytes(body).decode(charset)
    except LookupError:
        raise RequestError(415, f"unknown charset {charset!r}") from None
    except UnicodeDecodeError:
        raise RequestError(400, f"request body is not valid {charset} text") from None


class Reviews(list):
    """``input_fn``'s result: the review texts, and ``top`` = ``(k, threshold)`` when the request asked for
    ranked classes (``"configuration"``), else ``None``."""

    top = None


def _configuration(config):
    """``{"k": 3, "threshold": 0.1}`` (both optional; SageMaker BlazingText's request shape) -> (k, threshold)."""
    from .predict import check_top

    if not isinstance(config, dict) or not set(config) <= {"k", "threshold"}:
        raise RequestError(400, '"configuration" must be an object with "k" and/or "threshold"')
    k, threshold = config.get("k", 1), config.get("threshold", 0.0)
    try:
        check_top(k, threshold, 1)
    except FastTextError as exc:
        raise RequestError(400, f"configuration: {exc}") from None
    return k, threshold


def _json_texts(payload):
    top = None
    if isinstance(payload, dict):
        if "instances" not in payload or not set(payload) <= {"instances", "configuration"}:
            raise RequestError(400, 'a JSON object must be {"instances": [review, ...]} with an optional '
                                    '"configuration": {"k": K, "threshold": P}')
        if "configuration" in payload:
            top = _configuration(payload["configuration"])
        payload = payload["instances"]
        if not isinstance(payload, list):
            raise RequestError(400, '"instances" must be a list of strings')
    if isinstance(payload, str):
        payload = [payload]
    if not isinstance(payload, list):
        raise RequestError(400, f'expected a string, a list of strings or {{"instances": [...]}}, got JSON {type(payload).__name__}')
    bad = [i for i, item in enumerate(payload) if not isinstance(item, str)]
    if bad:
        raise RequestError(400, f"every review must be a JSON string; item {bad[0]} is {type(payload[bad[0]]).__name__}")
    texts = Reviews(payload)
    texts.top = top
    return texts


def input_fn(request_body, content_type):
    """Request -> list of review texts (raw; normalized by the predictor as in training)."""
    if not content_type:
        raise RequestError(415, f"request has no Content-Type; send one of {', '.join(CONTENT_TYPES)}")
    media, charset = _media_type(content_type)
    if media not in CONTENT_TYPES:
        raise RequestError(415, f"content type {media!r} is not supported; send one of {', '.join(CONTENT_TYPES)}")
    if media == JSON_TYPE and isinstance(request_body, (list, dict)):  # a server that decoded JSON itself
        texts = _json_texts(request_body)
    else:
        text = _body_text(request_body, charset)
        if media == JSON_TYPE:
            try:
                payload = json.loads(text)
            except ValueError as exc:
                raise RequestError(400, f"request body is not valid JSON: {exc}") from None
            except RecursionError:  # "[[[[..." a few thousand deep: json's recursive decoder gives up
                raise RequestError(400, "request body is not valid JSON: nested too deeply") from None
            texts = _json_texts(payload)
        elif media == TEXT_TYPE:
            from .text import split_lines

            texts = split_lines(text)
        else:
            from .data import allow_long_csv_fields

            allow_long_csv_fields(len(text))  # a review may be as long as the body (the csv default: 128 KiB)
            try:
                texts = [",".join(record) for record in csv.reader(io.StringIO(text, newline=""), strict=True)]
            except csv.Error as exc:
                raise RequestError(400, f"request body is not valid CSV: {exc}") from None
    if not any(t.strip() for t in texts):
        raise RequestError(400, "request holds no review text")
    for i, text in enumerate(texts):  # a lone surrogate ("\ud800" in JSON, or a charset such as unicode_escape)
        try:                          # failed in featurization, as a 500
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise RequestError(400, f"review {i} is not valid Unicode text (character {text[exc.start]!r} at "
                                    f"position {exc.start}: a lone surrogate)") from None
    return texts


def predict_fn(input_data, model):
    """Reviews -> one ``{"label", "probability", "class_id"}`` per review (the most probable class); with a
    request ``"configuration"``, a list of them per review (:meth:`Predictor.predict_top`)."""
    predictor = getattr(model, "predictor", None)
    if predictor is None:
        raise TypeError("model_fn must return the block with its Predictor attached (fasttext_lib.sm_serve.model_fn)")
    top = getattr(input_data, "top", None)
    if top is not None:
        return predictor.predict_top(input_data, k=top[0], threshold=top[1])
    return predictor.predict(input_data)


def _accepts_json(accept):
    """Does an ``Accept`` header admit ``application/json``? (RFC 9110: the most specific range decides its q.)

    ``application/json, text/plain`` and ``text/html, */*;q=0.8`` do; ``application/json;q=0`` or
    ``text/csv`` alone do not. Case and parameters other than ``q`` are ignored; an empty header
    accepts anything.
    """
    if not accept or not str(accept).strip():
        return True
    best = None  # (specificity, q) of the most specific range that matches application/json
    for item in str(accept).split(","):
        media, *params = [part.strip() for part in item.split(";")]
        media = media.lower()
        if not media:
            continue
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0  # an unreadable weight admits nothing
        specificity = {JSON_TYPE: 2, "application/*": 1, "*/*": 0}.get(media)
        if specificity is not None and (best is None or specificity > best[0]):
            best = (specificity, q)
    return best is not None and best[1] > 0


def output_fn(prediction, accept):
    """Predictions -> (``application/json`` text, ``"application/json"``).

    The toolkit sets the response's Content-Type from the second item (it would echo the
    ``Accept`` header, e.g. ``application/*``, if only the body came back).
    """
    if not _accepts_json(accept):
        raise RequestError(406, f"cannot answer in {str(accept)!r}; accept application/json")
    return json.dumps(prediction), JSON_TYPE
