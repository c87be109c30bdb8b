"""The SageMaker endpoint's hosting functions: ``model_fn``, ``input_fn``, ``predict_fn``, ``output_fn``.

The MXNet inference toolkit imports ``entry_point`` (which re-exports these; ``inference``, the same file, where no
``SAGEMAKER_PROGRAM`` names it) from ``/opt/ml/model/code``; see :func:`fasttext_lib.packaging.pack_model`. The toolkit refuses a
``transform_fn`` next to ``input_fn``/``predict_fn``/``output_fn`` and, without ``transform_fn``,
accepts only a Gluon ``Block`` (or Module) from ``model_fn``. So :func:`model_fn` returns the
classifier block with the loaded :class:`~fasttext_lib.predict.Predictor` (vocabulary, n-gram
settings, labels) attached, and the three functions below do the rest:

* :func:`input_fn`: the request's body -> its reviews, for ``application/json``, ``application/jsonlines``,
  ``text/plain`` and ``text/csv`` (serve_requests.py says how each is read);
* :func:`predict_fn`: the reviews -> one answer each, the most probable class, or with a ``"configuration"``
  (BlazingText's ``{"k": 3, "threshold": 0.1}``) or a JSON Lines request the classes asked for;
* :func:`output_fn`: the answers -> the response, in ``application/json``, ``application/jsonlines`` or
  ``text/csv`` as the ``Accept`` header asks (serve_responses.py says how each is written);
* an answer over :data:`MAX_RESPONSE_BYTES` is a 413 (SageMaker refuses real-time answers over 6 MB);
* bad requests raise :class:`~fasttext_lib.serve_requests.RequestError`, which the toolkit answers with its 4xx
  status: 415 for another content type or a charset that is no text charset (unicode_escape, rot13), 406 when
  ``Accept`` admits no answer type, 413 above :data:`MAX_REQUEST_BYTES`, 400 for two conflicting charsets (or CSV
  ``header`` values), bad JSON (also nested too deeply, or an object that names a key twice) or CSV, non-UTF-8
  bodies, bodies with NUL characters (UTF-16 sent as UTF-8), items that are neither a string nor missing (null or
  NaN, in a list, alone or a JSON line: an empty review) and requests without any text (in Batch Transform, records
  that are all blank are answered, and a body with no record, an empty object of the input, gets no answer; a JSON
  string's lone surrogate escape is U+FFFD);
* a 500 (a defect of ours) is answered in one line; its traceback goes to the endpoint's log (stderr); every error's
  answer is ``text/plain; charset=utf-8`` (:data:`ERROR_TYPE`).

Non-UTF-8 bodies: the toolkit itself decodes a body as UTF-8 before ``input_fn`` when the Content-Type is
exactly one of its ``UTF8_TYPES`` (``application/json``, ``text/csv``), and answered a body that failed with a 500
no user function could turn into a 400. :func:`model_fn` takes those types off that list, so every body reaches
:func:`input_fn` as bytes, decoded with the request's charset (UTF-8 by default) and answered with a 400 when it
does not decode.

Serving imports neither the training modules nor tqdm (the inference containers have no tqdm):
tests/test_architecture.py checks it.
"""
import os

from . import storage
from .errors import FastTextError, lone_surrogate_message
from .serve_limits import (BATCH_RESPONSE_BYTES, UNLIMITED_PAYLOAD_BYTES, in_batch_transform, max_request_bytes,
                           max_response_bytes, model_server_workers)
from .serve_requests import (CONTENT_TYPES, CSV_TYPE, JSON_TYPE, JSONLINES_TYPE, TEXT_TYPE, RequestError, Reviews,
                             answered_blank, body_text, csv_request, csv_texts, header_parameter, json_request,
                             json_texts, jsonlines_texts, media_type, no_review_text, plain_texts, without_boms)
from .serve_responses import (ANSWER_TYPES, CSV_FIELDS, Answers, FieldNames, answer_bytes, default_accept_hint,
                              response_body, response_type)

# The hooks, and the names sm_serve had before its request and response code had modules of their own
__all__ = ["model_fn", "input_fn", "predict_fn", "output_fn", "RequestError", "Reviews", "Answers", "FieldNames",
           "JSON_TYPE", "JSONLINES_TYPE", "TEXT_TYPE", "CSV_TYPE", "CONTENT_TYPES", "ANSWER_TYPES", "CSV_FIELDS",
           "MAX_REQUEST_BYTES", "MAX_RESPONSE_BYTES", "RESPONSE_CHECK_REVIEWS", "BATCH_RESPONSE_BYTES",
           "UNLIMITED_PAYLOAD_BYTES", "in_batch_transform", "max_request_bytes", "max_response_bytes"]

# SageMaker's real-time InvokeEndpoint payload limit; FASTTEXT_MAX_REQUEST_BYTES (model env) changes it;
# in Batch Transform it follows MaxPayloadInMB.
MAX_REQUEST_BYTES = max_request_bytes(os.environ)
# The answer's cap: with "k": -1 on a many-class model, or many tiny lines, it can be many times the
# request; above it the request gets a 413 that says how many reviews fit, checked as the answer is built
# (so a runaway answer never fills the worker's memory) and again on the exact body.
MAX_RESPONSE_BYTES = max_response_bytes(os.environ)
# An error's answer (a 4xx or a 500): its one line of text
ERROR_TYPE = "text/plain; charset=utf-8"
# predict_fn scores this many reviews at a time and stops at the first batch that takes the answer over the cap
RESPONSE_CHECK_REVIEWS = 2048

# model_dir -> the loaded block. The MXNet toolkit's HandlerService calls model_fn twice at start-up
# (once to pick its transformer, once more through it): a large bundle is read and built once.
_LOADED = {}


def model_fn(model_dir, context=None):
    """Load the bundle in ``model_dir``; return the Gluon block with ``.predictor`` (and its parts) attached.

    Loaded once per ``model_dir`` and device; later calls return the same block. The memory the load needs is checked
    for each of the model server's workers that load it at once (:func:`_workers_loading`).
    """
    from .compact import COMPACT_EITHER
    from .predict import Predictor
    from .table_memory import loading_together

    _let_input_fn_decode()
    _answer_request_errors_in_one_line()
    ctx = _serving_ctx(context)
    key = (os.path.abspath(str(model_dir)) if "://" not in str(model_dir) else str(model_dir), ctx)
    stamp = _bundle_stamp(model_dir)
    cached = _LOADED.get(key)
    if cached is not None and stamp is not None and cached[0] == stamp:
        return cached[1]
    with loading_together(_workers_loading(key[0])):
        predictor = Predictor.load(model_dir, ctx=ctx, compact_as=COMPACT_EITHER)  # (its bundle made either way)
    _mark_loaded(key[0])
    block = predictor.block  # a compact bundle's table is not built: predict_fn reads its stored rows
    block.predictor = predictor
    block.featurizer, block.labels, block.names = predictor.featurizer, predictor.labels, predictor.names
    _LOADED[key] = (stamp, block)
    return block


def input_fn(request_body, content_type):
    """Request -> list of review texts (raw; normalized by the predictor as in training)."""
    if not content_type:
        raise RequestError(415, f"request has no Content-Type; send one of {', '.join(CONTENT_TYPES)}")
    media, charset = media_type(content_type)
    if media not in CONTENT_TYPES:
        raise RequestError(415, f"content type {media!r} is not supported; send one of {', '.join(CONTENT_TYPES)}")
    text = None  # (the body's text, as decoded)
    if media == JSON_TYPE and isinstance(request_body, (list, dict)):  # a server that decoded JSON itself
        texts = json_texts(request_body)
    else:
        # A leading BOM (a file saved by Windows tools; Batch Transform hands it on in a file's first
        # mini-batch) is no part of the first review, as in the CLI and the training readers: it failed
        # the first JSON line (a 400, the job stopped) and made the first word of text/plain an unknown one.
        # So is one that starts a later line (Windows files joined with cat), as predict reads the file.
        text = without_boms(body_text(request_body, charset, MAX_REQUEST_BYTES))
        if not text and request_body and not in_batch_transform(os.environ):  # (UTF-16's codec drops the BOM itself)
            raise no_review_text(text, byte_order_mark=True)  # a BOM alone: it said "the body is empty" of its bytes
        if media == JSON_TYPE:
            texts = json_request(text)
        elif media == JSONLINES_TYPE:
            texts = jsonlines_texts(text)
        elif media == TEXT_TYPE:
            texts = plain_texts(text)
        else:
            texts = csv_request(text, header_parameter(content_type))
    if not getattr(texts, "lines", False) and not any(t.strip() for t in texts) \
            and not getattr(texts, "header_record", False) and not answered_blank(texts):
        # (a JSON line is a record even when its review is empty; Batch Transform's header record alone is answered)
        names = getattr(texts, "header_names", None)  # (a CSV's header and no rows: predict says "no data rows")
        if names is None:
            raise no_review_text(text)  # (saying what the body held: nothing, or blank lines)
        raise RequestError(400, f"request holds no review text: only a header row ({_header_shown(names)})")
    # a lone surrogate (in a str another server decoded, with surrogateescape; JSON's escapes are U+FFFD by now)
    # failed in featurization, as a 500
    lines = getattr(texts, "lines", False)
    bad = lone_surrogate_message(texts, (lambda i: f"line {i + 1}") if lines else (lambda i: f"review {i}"))
    if bad:
        raise RequestError(400, bad)
    return texts


def _header_shown(names):
    """A CSV header row ``names`` as a 400 shows it: its names joined with commas, or, when every one is empty (``,,``:
    a row of nothing but commas), what it is; "only a header row ()" told no one what the body held."""
    if any(name.strip() for name in names):
        return ",".join(names)
    return f"of {len(names)} empty column names: a line of commas alone"


def predict_fn(input_data, model):
    """Reviews -> one ``{"label", "probability", "class_id"}`` per review (the most probable class); with a
    request ``"configuration"`` (or JSON Lines), a list of them per review (:meth:`Predictor.predict_top`).

    Scored :data:`RESPONSE_CHECK_REVIEWS` at a time: a request whose answer outgrows
    :data:`MAX_RESPONSE_BYTES` stops with a 413 at the batch that crosses it."""
    from .features import NoRoomToFeaturize

    predictor = getattr(model, "predictor", None)
    if predictor is None:
        raise TypeError("model_fn must return the block with its Predictor attached (fasttext_lib.sm_serve.model_fn)")
    texts = csv_texts(input_data, predictor) if getattr(input_data, "records", None) else list(input_data)
    top = getattr(input_data, "top", None)
    answers = Answers()
    answers.ranked, answers.lines = top is not None, bool(getattr(input_data, "lines", False))
    answers.width = _classes_asked(top, len(predictor.labels))
    if getattr(input_data, "header_record", False):  # a CSV header record answered in Batch Transform
        blank = getattr(input_data, "lead_blank", 0)
        answers.extend((predictor.predict([""]) * blank if blank else []) + [FieldNames()])
    led = len(answers)
    size = 0
    for start in range(0, len(texts), RESPONSE_CHECK_REVIEWS):
        chunk = texts[start:start + RESPONSE_CHECK_REVIEWS]
        try:
            part = _answers_of(predictor, chunk, top, start)
        except NoRoomToFeaturize as exc:  # (the OOM killer ended the worker, and the request failed without a word)
            raise RequestError(413, exc.where(f"review {start + exc.index + 1}")) from None
        size += answer_bytes(part, answers.ranked, answers.width)
        if size > MAX_RESPONSE_BYTES:
            raise _too_big(start + len(chunk), len(texts), size)
        answers.extend(part)
    _answer_header_repeats(answers, led, getattr(input_data, "header_repeats", ()))
    _log_fewer_answers_than_lines(len(answers), getattr(input_data, "body_lines", None))
    return answers


def _log_fewer_answers_than_lines(answered, lines):
    """A line in the log (stderr: CloudWatch) when a Batch Transform ``text/csv`` mini-batch of ``lines`` lines gets
    fewer answers: a review quoted over lines is one record, one answer, right for a whole file (split_type=None),
    but with split_type="Line" SageMaker joins answer i to line i, and every answer after it was one line off without
    a word. The container is not told the split type, so the records are answered and the log says so."""
    if lines is not None and answered < lines:
        import sys

        print(f"text/csv: {answered} answers to a mini-batch of {lines} lines (a review quoted over several lines is "
              f"one record): with split_type=\"Line\" SageMaker joins answers to lines; write each review on one line, "
              f"or send JSON Lines", file=sys.stderr, flush=True)


def _answer_header_repeats(answers, led, repeats):
    """``answers`` with the header's answer (FieldNames) in the places ``repeats`` (ascending: where the header was
    repeated among the records after it, joined files' headers, in Batch Transform), counted from ``led``: each record
    its answer. Built in one pass: an insert a repeat moved every answer after it, quadratic in a body of many (a file
    appended to with ``to_csv(mode="a")`` repeats its header before every row)."""
    if not repeats:
        return
    rows, merged, at = answers[led:], [], 0
    for position in repeats:
        count = position - len(merged)  # the rows' answers before this repeat
        merged.extend(rows[at:at + count])
        merged.append(FieldNames())
        at += count
    del answers[led:]
    answers.extend(merged + rows[at:])


def output_fn(prediction, accept):
    """Predictions -> (body, media type): ``application/json`` text, ``application/jsonlines`` or ``text/csv`` (one
    line per review, in order); 406 when ``Accept`` admits none of them, 413 above :data:`MAX_RESPONSE_BYTES`.

    The toolkit sets the response's Content-Type from the second item (it would echo the
    ``Accept`` header, e.g. ``application/*``, if only the body came back).
    """
    lines = bool(getattr(prediction, "lines", False))
    media = response_type(accept, lines)
    if media is None:
        wanted = ("application/jsonlines or text/csv" if lines  # (a JSON Lines request: a line per line)
                  else "application/json, application/jsonlines or text/csv")
        raise RequestError(406, f"cannot answer in {str(accept)!r}; accept {wanted}{default_accept_hint(accept)}")
    body = response_body(prediction, media)
    size = len(body.encode("utf-8"))
    if size > MAX_RESPONSE_BYTES:
        raise _too_big(len(prediction), len(prediction), size)
    return body, media


# ---- model_fn's steps: the device, the loaded bundle's cache, the toolkit patched for this serving process

def _serving_ctx(context):
    import mxnet as mx

    num_gpus = mx.context.num_gpus()
    if num_gpus == 0:
        return "cpu"
    properties = getattr(context, "system_properties", None) or {}
    gpu_id = properties.get("gpu_id") or 0
    return f"gpu:{int(gpu_id) % num_gpus}"


def _workers_loading(model_dir):
    """table_memory.LoadingTogether of the model server's workers (serve_limits.model_server_workers) that load the
    bundle in ``model_dir`` with this one: MMS starts them all at once, one per vCPU by default, each loading its own
    copy, and each saw the same memory available, so that a full bundle of more than 1/N of it passed the check in
    every worker and the OOM killer ended them, with no word in the log. Those that hold it already (a worker MMS
    restarts later beside them: :func:`_mark_loaded`) have taken their memory, and are not counted again."""
    import mxnet as mx

    from .table_memory import LoadingTogether

    count, why, variable = model_server_workers(os.environ, mx.context.num_gpus())
    loaded = min(len(_loaded_workers(model_dir)), count - 1)
    return LoadingTogether(count - loaded, loaded, why, variable)


def _loaded_marks(model_dir):
    """The folder where each process that loaded the bundle in ``model_dir`` leaves a file named by its pid, holding
    its start time (:func:`_process_start`)."""
    import hashlib
    import tempfile

    name = hashlib.sha1(str(model_dir).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"fasttext_lib-{os.getuid()}-served", name)


def _loaded_workers(model_dir):
    """The pids of the other live processes that loaded the bundle in ``model_dir`` (:func:`_mark_loaded`). The
    temporary of a mark whose writer was killed while writing it (:func:`_mark_loaded`) is none, and is removed here:
    it stayed for good, and the folder with it."""
    try:  # (gettempdir raises where there is no temporary folder: no marks)
        directory = _loaded_marks(model_dir)
        names = os.listdir(directory)
    except OSError:
        return []
    for name in names:  # (a mark's temporary, ".<pid>.fasttext-<pid>-<hex>.tmp": removed once no writer holds it)
        if storage.is_temporary_of(name, os.path.join(directory, name[1:].split(".", 1)[0])):
            storage.remove_dead_temporary(os.path.join(directory, name))
    pids = [int(name) for name in names if name.isdigit() and int(name) != os.getpid()]
    return sorted(pid for pid in pids if _marked_by(os.path.join(directory, str(pid)), pid))


def _marked_by(mark, pid):
    """Was ``mark`` left by the process that has ``pid`` now? A killed worker's mark stays, and the kernel gives its pid
    to another process in time: counted as a worker that held the bundle, the memory check was one worker short. The
    mark holds its writer's start time, which the process under that pid has too only when it is the writer."""
    try:
        with open(mark, encoding="ascii") as file:
            written = file.read()
    except (OSError, ValueError):  # (taken back meanwhile; or not ours)
        return False
    started = _process_start(pid)
    return started is not None and written == started


# Where the kernel tells each process's start time (Linux)
_PROC = "/proc"


def _process_start(pid):
    """What tells the process ``pid`` from another given the same pid later: its start time (clock ticks after boot,
    field 22 of /proc/PID/stat), as text; None when no live process has it: none, or one that has exited but is not
    reaped yet (a zombie, state Z, or X as it goes), which keeps its pid and start time but no memory: its mark read as
    a loaded worker's. Where there is no /proc (not Linux), ``""`` for a live pid: the pid alone names the process
    there."""
    try:
        with open(os.path.join(_PROC, str(pid), "stat"), "rb") as file:
            stat = file.read()
    except OSError:
        if os.path.exists(os.path.join(_PROC, "self", "stat")):
            return None
        return "" if _alive(pid) else None
    # the fields after the command's name (field 2, in parentheses, which may hold spaces and parentheses): 3 to 52
    fields = stat[stat.rfind(b")") + 1:].split()
    if len(fields) <= 19 or fields[0] in (b"Z", b"X", b"x"):  # (field 3: the state; x: dead, on kernels 2.6.33-3.13)
        return None
    return fields[19].decode("ascii")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (another user's: alive)
        pass
    return True


def _mark_loaded(model_dir):
    """Leave word that this process holds the bundle in ``model_dir`` (a file named by its pid, holding its start time:
    :func:`_marked_by`); nothing where the temporary folder cannot be written (the check then counts every worker, as
    at start-up). The mark is written whole or not at all (storage.atomic_local_file: a temporary renamed into place):
    written in place, a worker reading it in that instant found it empty, no worker's, and counted one too few."""
    import atexit

    try:  # (gettempdir itself raises where no temporary folder can be written: a read-only file system)
        mark = os.path.join(_loaded_marks(model_dir), str(os.getpid()))
        with storage.atomic_local_file(mark, "w") as file:
            file.write(_process_start(os.getpid()) or "")
    except (OSError, FastTextError):  # (FastTextError: atomic_local_file's, for an OSError)
        return
    atexit.register(_unmark_loaded, mark)


def _unmark_loaded(mark):
    """A process that ends in order (the model server stops it; a test run) takes its word back, and the folder when it
    was the last (one killed leaves its file: :func:`_marked_by` skips it, under a pid that is no longer its)."""
    for remove, path in ((os.remove, mark), (os.rmdir, os.path.dirname(mark))):
        try:
            remove(path)
        except OSError:  # (taken back already: a second load of the same bundle; or others' marks are left)
            pass


def _bundle_stamp(model_dir):
    """What tells a bundle in place from a replaced one (a local config.json's identity)."""
    try:
        st = os.stat(os.path.join(str(model_dir), "config.json"))
    except OSError:  # s3:// or no bundle yet: Predictor.load reports it
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _let_input_fn_decode():
    """The toolkit (sagemaker-inference's ``Transformer.transform``) decodes the bodies of exactly
    ``application/json`` and ``text/csv`` as UTF-8 itself, before input_fn, for the types on its
    ``content_types.UTF8_TYPES``: a body in another encoding (a CSV saved as cp1252) was a 500 with the
    codec's message, an error of the server, which Batch Transform retries. With those two taken off the
    list (in this serving process only: a new list, the toolkit's own left as it was), input_fn gets their
    bytes and decodes them as it does every other type's: the same texts for UTF-8, and a 400 that says
    what was wrong for anything else. Another toolkit, without that list, is left as it is."""
    import sys

    content_types = sys.modules.get("sagemaker_inference.content_types")
    decoded = getattr(content_types, "UTF8_TYPES", None)
    if isinstance(decoded, list) and (JSON_TYPE in decoded or CSV_TYPE in decoded):
        content_types.UTF8_TYPES = [t for t in decoded if t not in (JSON_TYPE, CSV_TYPE)]


def _answer_request_errors_in_one_line():
    """The toolkit answers every error raised in a handler with its message, a newline and the Python traceback
    (``Transformer.handle_error``): a client that sent bad CSV got our one line followed by 20 lines of this
    library's internals and file paths. A bad request (:class:`RequestError`, 4xx) is now answered with its
    message alone, as :data:`ERROR_TYPE` (the toolkit set no Content-Type on an error). A server error (500: a
    defect of ours) is answered with its message's first line (an MXNetError's goes on with its C++ stack) and a pointer to the log; its traceback, which its report needs, is written to the
    worker's stderr, which the server keeps in the endpoint's log (it was in the body only: the server's code and
    paths handed to whoever sent the request, and nothing in the log).
    Patched on the toolkit's class, in this serving process; a toolkit without it is left as it is."""
    import sys

    transformer = getattr(sys.modules.get("sagemaker_inference.transformer"), "Transformer", None)
    original = getattr(transformer, "__dict__", {}).get("handle_error")
    if not isinstance(original, staticmethod) or getattr(original.__func__, "one_line_requests", False):
        return
    answer = original.__func__

    def handle_error(context, inference_exception, trace):
        # the toolkit sets no Content-Type on an error (only transform's success path does): a client's HTTP library
        # guessed at the body, or took it for binary; it is our one line of UTF-8 text
        set_type = getattr(context, "set_response_content_type", None)
        if set_type is not None:
            set_type(0, ERROR_TYPE)
        if isinstance(inference_exception, RequestError) or getattr(inference_exception, "status_code", 500) < 500:
            return [line.rstrip("\n") for line in answer(context, inference_exception, "")]
        print(trace, file=sys.stderr, flush=True)
        message = (str(getattr(inference_exception, "message", "") or "").strip().splitlines() or ["internal error"])[0]
        inference_exception.message = f"{message} (a server error; its traceback is in the endpoint's log)"
        # the status line's reason phrase too: the toolkit's GenericInferenceToolkitError takes it from str(exc),
        # the whole message with its lines joined (an MXNetError's C++ stack), and MMS sends it in the status line
        inference_exception.phrase = "Internal Server Error"
        return [line.rstrip("\n") for line in answer(context, inference_exception, "")]

    handle_error.one_line_requests = True
    transformer.handle_error = staticmethod(handle_error)


# ---- predict_fn's steps: the reviews scored a batch at a time, the answer's size checked against its cap

def _answers_of(predictor, chunk, top, start):
    """:func:`predict_fn`'s answers to the reviews ``chunk`` (from review ``start``) for the request's ``top``."""
    if top is None:
        return predictor.predict(chunk)
    if isinstance(top, list):  # JSON Lines: each line its own k and threshold; the reviews scored once (each
        # setting was scored apart, its lines found by a scan of the batch: lines each with its own threshold took
        # 20 times as long), each line's classes cut to its setting
        part = [None] * len(chunk)
        probs = predictor.predict_proba(chunk)
        lines_of = {}
        for i, setting in enumerate(top[start:start + len(chunk)]):
            lines_of.setdefault(setting, []).append(i)
        for setting, where in lines_of.items():
            for i, ranked in zip(where, predictor.top_of(probs[where], *setting)):
                part[i] = ranked
        return part
    return predictor.predict_top(chunk, k=top[0], threshold=top[1])


def _classes_asked(top, num_classes):
    """The most classes a review of the request is answered with: 1, or the largest k of ``top`` (``(k,
    threshold)``, or a JSON Lines request's list of them), the model's ``num_classes`` at most."""
    from .predict import check_top

    settings = [] if top is None else top if isinstance(top, list) else [top]
    return max([check_top(k, threshold, num_classes)[0] for k, threshold in settings], default=1)


def _too_big(reviews_measured, total_reviews, size):
    """413 for an answer of ``size`` bytes (or more) to the first ``reviews_measured`` of ``total_reviews``."""
    fits = reviews_measured * MAX_RESPONSE_BYTES // size
    return RequestError(413, f"the answer to {total_reviews} reviews would exceed the response limit of "
                             f"{MAX_RESPONSE_BYTES} bytes (FASTTEXT_MAX_RESPONSE_BYTES): {size} bytes for the first "
                             f"{reviews_measured}; send at most about {fits} reviews per request, or ask for fewer "
                             f"classes (k)")
