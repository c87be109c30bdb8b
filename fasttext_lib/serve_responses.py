"""``predict_fn``'s answers (:class:`Answers`) -> the response body ``output_fn`` sends, in the type ``Accept`` asks:

* ``application/json``: ``[{"label": "positive", "probability": 0.97, "class_id": "2"}, ...]``,
  one per review, whenever the ``Accept`` header admits it (``*/*``, ``application/*``, lists,
  q-values). ``{"instances": [...], "configuration": {"k": 3, "threshold": 0.1}}`` (BlazingText's
  shape; both keys optional) answers a list of up to k classes per review instead, most probable
  first, those below the threshold left out. ``label`` is the class's name when the bundle stores one (label_names.py), else the
  raw label; ``class_id`` is always the raw label, as the training data wrote it;
* ``application/jsonlines`` for a JSON Lines request (or an ``Accept`` that prefers it): one
  line per review, in order, ``{"label": [...], "prob": [...], "class_id": [...]}`` (BlazingText's);
* ``text/csv`` for an ``Accept`` that prefers it (Batch Transform's ``accept="text/csv"``), whatever the
  request's type: one CSV record a line per review, in order, ``label,probability,class_id`` (with k classes, k such
  triples, empty fields where the threshold left fewer), so that ``join_source="Input"`` joins each to its record. A
  missing Accept is still answered in JSON (the toolkit hands it on as ``application/json``).

In Batch Transform a body with no record gets an empty body in every type (no output line), JSON's too.
"""
import csv
import io
import json
import os

from .serve_limits import in_batch_transform
from .serve_requests import CSV_TYPE, JSON_TYPE, JSONLINES_TYPE


class Answers(list):
    """``predict_fn``'s result: one answer per review, in order; ``ranked``: each answer is a list of
    classes (a ``"configuration"`` or JSON Lines request), else one class; ``lines``: a JSON Lines request;
    ``width``: the most classes the request asked for a review (its k, the model's classes at most), which a CSV
    answer gives every record, so that all are as wide whatever the threshold left."""

    ranked = False
    lines = False
    width = 1


class FieldNames(dict):
    """The answer to a CSV header record in Batch Transform (``text/csv; header=present``, or plain ``text/csv`` whose
    first row is a header row): the answer's field names where an answer's values go, ``{"label": "label", "probability": "probability", "class_id": "class_id"}``
    (JSON Lines: ``{"label": ["label"], "prob": ["prob"], "class_id": ["class_id"]}``), so that every record has
    its answer and, joined to the input (``join_source="Input"``), the header row is joined to names."""

    def __init__(self):
        super().__init__(label="label", probability="probability", class_id="class_id")


# The types an answer can take, in the order that breaks a tie between equal weights in ``Accept`` (``*/*``: JSON)
ANSWER_TYPES = (JSON_TYPE, JSONLINES_TYPE, CSV_TYPE)


def _accept_weights(accept):
    """``Accept`` -> {answer type: its q} for each of :data:`ANSWER_TYPES`, from the most specific range that
    matches it (RFC 9110: ``text/csv``, then ``text/*``, then ``*/*``), None where none does. Case and parameters
    other than ``q`` are ignored; an empty header accepts anything. A weight that is no number from 0 to 1 admits
    nothing (0)."""
    if not accept or not str(accept).strip():
        return dict.fromkeys(ANSWER_TYPES, 1.0)
    best = dict.fromkeys(ANSWER_TYPES)  # media -> (specificity, q)
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
                if not 0.0 <= q <= 1.0:  # (nor does one out of range: q=-1 on JSON ranked JSON Lines above it)
                    q = 0.0
        for target in best:
            specificity = {target: 2, target.split("/")[0] + "/*": 1, "*/*": 0}.get(media)
            if specificity is not None and (best[target] is None or specificity > best[target][0]):
                best[target] = (specificity, q)
    return {t: None if best[t] is None else best[t][1] for t in ANSWER_TYPES}


def response_type(accept, lines):
    """The response's media type: the answer type ``Accept`` weighs highest (a tie: JSON, then JSON Lines, then
    CSV), None when it admits none. A JSON Lines request is answered a line per line, in JSON Lines or CSV, never
    as one JSON array: in JSON Lines whenever ``Accept`` admits it or ``application/json`` (the toolkit hands a
    missing or ``*/*`` Accept on as ``application/json``, so that cannot be told from no preference; BlazingText
    answers its JSON Lines in kind too), unless it refuses JSON Lines by name (``application/jsonlines;q=0``)."""
    asked = _accept_weights(accept)
    weights = {media: q or 0.0 for media, q in asked.items()}
    if lines:
        refused = asked[JSONLINES_TYPE] == 0  # by name or by its range; not merely unnamed (None)
        weights = {JSONLINES_TYPE: 0.0 if refused else max(weights[JSON_TYPE], weights[JSONLINES_TYPE]),
                   CSV_TYPE: weights[CSV_TYPE]}
    media = max(weights, key=weights.get)  # the first of the highest: the order of the tie-break
    return media if weights[media] > 0 else None


def default_accept_hint(accept):
    """The toolkit puts the model's ``SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT`` in place of a missing or ``*/*`` Accept
    (Autopilot's containers set it to ``text/csv``, answered now; another type may not be): a 406 for a type the
    client never named said nothing of the variable that did. Said when ``accept`` is that variable's value (a client
    may also have sent it itself)."""
    default = str(os.environ.get("SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT") or "").strip()
    if not default or str(accept).strip() != default:
        return ""
    return (" (it is the model's SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT, which stands for a missing or */* Accept "
            "header: unset it or set it to one of these)")


def response_body(prediction, media):
    """The body of the answers ``prediction`` in the answer type ``media`` (one of :data:`ANSWER_TYPES`)."""
    ranked = getattr(prediction, "ranked", None)
    if ranked is None:  # a plain list (not predict_fn's): ranked when its answers are lists
        ranked = bool(prediction) and isinstance(prediction[0], list)
    if media == JSON_TYPE:
        # In Batch Transform a body with no record (an empty object of the input) gets no answer in every type, as
        # in JSON Lines and CSV: its [] was an output line of its own with assemble_with="Line", one line more than
        # the input's. An endpoint never answers no review (a 400), and a Python caller's [] stays valid JSON.
        return "" if not prediction and in_batch_transform(os.environ) else _json_body(prediction)
    if media == JSONLINES_TYPE:
        return _jsonlines_body(prediction, ranked)
    longest = max((len(a) for a in prediction if isinstance(a, list)), default=1)
    return _csv_body(prediction, max(getattr(prediction, "width", 1), longest))


def answer_bytes(answers, ranked, width):
    """The size of ``answers`` in the smallest of the response forms (the exact body is checked again)."""
    return min(len(_json_body(answers)), len(_jsonlines_body(answers, ranked)), len(_csv_body(answers, width)))


def _json_body(answers):
    return json.dumps(answers)


def _jsonlines_body(answers, ranked):
    """One line per review, BlazingText's Batch Transform shape: ``{"label": [...], "prob": [...]}``, most
    probable first, and ``"class_id": [...]``, the raw labels beside the names. Lines are separated by
    ``\\n`` with none after the last: Batch Transform's ``AssembleWith=Line`` adds one after each
    mini-batch's answer, and a line end of ours there would leave a blank line between mini-batches."""
    out = []
    for answer in answers:
        if isinstance(answer, FieldNames):
            out.append(json.dumps({"label": ["label"], "prob": ["prob"], "class_id": ["class_id"]}))
            continue
        classes = answer if ranked else [answer]
        out.append(json.dumps({"label": [c["label"] for c in classes], "prob": [c["probability"] for c in classes],
                               "class_id": [c["class_id"] for c in classes]}))
    return "\n".join(out)


# a CSV answer's fields for each class, in the JSON answer's order
CSV_FIELDS = ("label", "probability", "class_id")


def _csv_body(answers, width=1):
    """One CSV record a line per review, in order: ``label,probability,class_id`` (a name with a comma or a
    quotation mark quoted as CSV quotes it; the probability's digits as JSON writes them), for each of up to
    ``width`` classes, most probable first; a review with fewer classes (a threshold) has its record filled with
    empty fields, so that every record is as wide (one with none: only commas, never a blank line, which CSV
    readers skip). A :class:`FieldNames` answer is the field names (``label_1,probability_1,...`` for more than one
    class). Lines are separated by ``\\n`` with none after the last, as in :func:`_jsonlines_body`: Batch
    Transform's ``AssembleWith=Line`` adds one after each mini-batch's answer."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for answer in answers:
        if isinstance(answer, FieldNames):
            writer.writerow(CSV_FIELDS if width == 1 else [f"{field}_{i}" for i in range(1, width + 1)
                                                           for field in CSV_FIELDS])
            continue
        classes = answer if isinstance(answer, list) else [answer]
        fields = [_one_line(c[field]) for c in classes for field in CSV_FIELDS]
        writer.writerow(fields + [""] * (len(CSV_FIELDS) * width - len(fields)))
    return out.getvalue()[:-1]


def _one_line(value):
    """A CSV answer's field on one line: a class read from a quoted CSV field over lines holds a line break, which the
    CSV writer keeps inside quotes, a record over two lines (Batch Transform's answer lines no longer each an input
    line's). Written as the data's CSV writes one, the two characters ``\\n`` (``\\r`` for a carriage return)."""
    return value.replace("\r", "\\r").replace("\n", "\\n") if isinstance(value, str) else value
