"""Checkpoints: ``<checkpoint_dir>/epoch-NNNN/`` (a directory or ``s3://`` prefix), newest kept.

Each holds the parameters, the optimizer state and ``checkpoint.json`` (epoch, labels, config,
history), is published atomically with its marker written last, and only then are older epochs
deleted, so a kill at any point leaves at least one complete checkpoint. :func:`load_checkpoint`
refuses one written by another run (other data or settings).
"""
import json
import os
import pickle
import tempfile

from . import storage
from .errors import FastTextError

CHECKPOINT_MARKER = "checkpoint.json"
CHECKPOINT_FILES = ("model.params", "optimizer.states", CHECKPOINT_MARKER)


def _checkpoint_epochs(checkpoint_dir):
    """Epochs with a complete checkpoint (their marker exists), newest last."""
    found = []
    if storage.is_s3(checkpoint_dir):
        bucket, prefix = storage.split_s3(checkpoint_dir)
        prefix = prefix.rstrip("/") + "/" if prefix else ""
        with storage.s3_errors(checkpoint_dir):
            pages = storage.s3_client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
            keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
        names = {k[len(prefix):] for k in keys}
    else:
        if not os.path.isdir(checkpoint_dir):
            return []
        names = {f"{d}/{CHECKPOINT_MARKER}" for d in os.listdir(checkpoint_dir)
                 if os.path.isfile(os.path.join(checkpoint_dir, d, CHECKPOINT_MARKER))}
    for name in names:
        head, _, tail = name.partition("/")
        if tail == CHECKPOINT_MARKER and head.startswith("epoch-") and head[6:].isdigit():
            found.append(int(head[6:]))
    return sorted(found)


def _epoch_dir(checkpoint_dir, epoch):
    return storage.join(checkpoint_dir, f"epoch-{epoch:04d}")


def save_checkpoint(checkpoint_dir, epoch, model, config, labels, history, optimizer_states):
    """Publish ``epoch-NNNN/`` (marker last), then delete older epochs: a kill at any point leaves
    at least one complete checkpoint."""
    older = _checkpoint_epochs(checkpoint_dir)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_parameters(os.path.join(tmp, "model.params"))
        with open(os.path.join(tmp, "optimizer.states"), "wb") as f:
            pickle.dump(optimizer_states, f)
        with open(os.path.join(tmp, CHECKPOINT_MARKER), "w") as f:
            json.dump({"epoch": epoch, "labels": list(labels), "num_rows": model.num_rows,
                       "config": config.to_dict(), "history": history}, f)
        storage.publish_directory(tmp, _epoch_dir(checkpoint_dir, epoch), marker=CHECKPOINT_MARKER)
    for old in older:
        if old != epoch:
            storage.remove_directory(_epoch_dir(checkpoint_dir, old), CHECKPOINT_FILES)


def load_checkpoint(checkpoint_dir, model, config, labels):
    """Load the newest checkpoint into ``model``; ``None`` when there is none yet."""
    epochs = _checkpoint_epochs(checkpoint_dir)
    if not epochs:
        return None
    where = _epoch_dir(checkpoint_dir, epochs[-1])
    with tempfile.TemporaryDirectory() as tmp:
        storage.fetch_directory(where, CHECKPOINT_FILES, tmp)
        with open(os.path.join(tmp, CHECKPOINT_MARKER)) as f:
            meta = json.load(f)
        if meta.get("labels") != list(labels) or meta.get("num_rows") != model.num_rows or not config.same_run(meta.get("config", {})):
            raise FastTextError(f"checkpoint {where} was written by a different run (other data or settings); "
                                f"use another --checkpoint-dir or remove it")
        model.load_parameters(os.path.join(tmp, "model.params"), ctx=model.embedding.weight.list_ctx())
        with open(os.path.join(tmp, "optimizer.states"), "rb") as f:
            meta["optimizer_states"] = pickle.load(f)
    return meta
