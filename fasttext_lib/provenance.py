"""Which data a bundle was tested on: the record notebook 02 stores in it, which notebook 04 checks.

02 stores :func:`data_record` in the bundle's metrics.json (``save_bundle(..., data=)``: its ``"data"``), and 04
refuses to score the model on another test split than that one (:func:`check_tested_on`): notebook 01 run again
with other settings, or another dataset under the same ``run_name``, made 04 score an old model on new documents
beside that model's old "final test accuracy at training", as if one run.
"""
import hashlib

from .errors import FastTextError


def documents_sha256(data):
    """A fingerprint of a :class:`~fasttext_lib.data.LabeledTexts`' documents (labels and texts, in order): the same
    documents give the same one wherever and however often they were written (S3's ETags differ under SSE-KMS)."""
    digest = hashlib.sha256()
    for label, text in zip(data.labels, data.texts):
        for part in (str(label), text):
            raw = part.encode("utf-8", "surrogatepass")
            digest.update(len(raw).to_bytes(8, "little") + raw)
    return digest.hexdigest()


def data_record(test_uri, test_data):
    """What notebook 02 stores in its bundle (``save_bundle(..., data=)``, metrics.json's ``"data"``): the test split
    it read, where it was and its documents' fingerprint, which 04 checks (:func:`check_tested_on`)."""
    return {"test": {"uri": str(test_uri), "documents": len(test_data), "sha256": documents_sha256(test_data)}}


def check_tested_on(predictor, test_uri, test_data, dataset):
    """One error unless ``test_data`` (read from ``test_uri`` by 04) is the test split 02 read when it trained the
    model ``predictor`` was loaded from. 01 run again with other settings after 02 (and 02 skipped, or stopped by a
    Ctrl-C or a diverged run), or a ``run_name`` given to 02 and 04 with other datasets: 04 scored the old model on
    the new documents beside the old run's "final test accuracy at training", as one run. A bundle without the
    record (saved by the CLI, a training job or an older 02) is not checked."""
    recorded = (getattr(predictor, "metrics", None) or {}).get("data") or {}
    tested = recorded.get("test") if isinstance(recorded, dict) else None
    if not isinstance(tested, dict):
        return
    bundle_uri = predictor.source
    if tested.get("uri") != str(test_uri):
        raise FastTextError(f"the model at {bundle_uri} was tested on {tested.get('uri')}, not on {test_uri} "
                            f"(dataset={dataset!r}): run this notebook with the dataset 02 trained it on, or score it "
                            f"on these documents with python -m fasttext_lib evaluate --model {bundle_uri} --data "
                            f"{test_uri}")
    if tested.get("sha256") != documents_sha256(test_data):
        then = tested.get("documents")
        counts = f" ({len(test_data)} documents, {then} then)" if then != len(test_data) else ""
        raise FastTextError(f"{test_uri} holds other test documents than when the model at {bundle_uri} was trained"
                            f"{counts}: notebook 01 wrote it again since; run notebook 02 again to train on the data "
                            f"as it is now")
