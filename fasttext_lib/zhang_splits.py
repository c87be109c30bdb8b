"""An archive's train and test splits: extracted by name (never outside the folder given), read whole or as a
sample spread over the whole split, and the seeded shuffled order in which prepare writes them.
"""
import os
import posixpath
import random
import shutil
import tarfile

from . import label_names, storage
from .data import LabeledTexts, iter_examples, read_labeled
from .errors import FastTextError
from .zhang_datasets import SPLITS

_CHUNK = 1 << 20  # bytes copied at a time


def extract_splits(archive, folder, out_dir):
    """Copy ``<folder>/train.csv`` and ``test.csv`` (and ``classes.txt``, when the archive has one) out
    of the archive; return their paths by split (``"classes"`` for the names).

    Members are matched by name and copied to paths we choose, so an archive can never write
    outside ``out_dir`` (no ``extractall``); links are not followed. A member the archive holds twice (an archive
    updated with ``tar -r``) is read as ``tar -xzf`` (fastText's classification-example.sh) extracts it: the later
    one wins, so the whole archive is read (the scan stopped once all three were found: the older copy was
    prepared).
    """
    wanted = {f"{folder}/{split}.csv": split for split in SPLITS}
    wanted[f"{folder}/{label_names.ZHANG_FILE}"] = "classes"
    found, links = {}, {}
    os.makedirs(os.path.join(out_dir, folder))  # so that data errors name e.g. .../ag_news_csv/train.csv
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                split = wanted.get(posixpath.normpath(member.name))
                if split is None:
                    continue
                if not member.isfile():
                    if member.issym() or member.islnk():
                        links[split] = f"{member.name} is a link (to {member.linkname}), not a file"
                    continue
                name = label_names.ZHANG_FILE if split == "classes" else f"{split}.csv"
                found[split] = os.path.join(out_dir, folder, name)
                links.pop(split, None)
                with tar.extractfile(member) as src, open(found[split], "wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
    except (tarfile.TarError, EOFError, OSError) as exc:
        if getattr(exc, "errno", None) in storage.NO_ROOM:  # a full TMPDIR, not a bad archive: staging_dir says so
            raise
        raise FastTextError(f"{archive}: cannot read the archive ({exc})") from None
    missing = [name for name, split in wanted.items() if split not in found | links.keys() and split != "classes"]
    unread = [links[split] for split in SPLITS if split in links and split not in found]
    if missing or unread:
        raise FastTextError(f"{archive}: " + "; ".join(([f"archive has no {', '.join(missing)}"] if missing else [])
                                                       + unread))
    return found


def read_split(path, member, limit):
    """A split extracted to ``path`` (a temporary), its errors naming the archive's ``member`` instead: the user
    can look there, not at a file deleted by the time the error is shown. ``limit``: :func:`spread_sample`.
    Returns the documents and each one's row number in the member, from 1 (None: 1, 2, 3, ...)."""
    try:
        if limit is None:
            return read_labeled(path, fmt="csv", find_names=False), None
        return spread_sample(path, limit)
    except FastTextError as exc:
        raise FastTextError(str(exc).replace(path, member)) from None


def shuffled(count):
    """Document indices ``0 .. count-1`` in a seeded random order, the same every run: the order in which
    :func:`prepare` writes a split, as fastText's classification-example.sh writes its splits shuffled (``myshuf``).
    Some archives list their classes one after the other (dbpedia's train.csv: 40,000 rows of class 1, then of class
    2, ...): whatever reads such a file's first rows saw one class (fastText C++, which trains in file order;
    ``read_labeled(limit=N)``; notebook 03's timing rows; the first 10,000 documents the training settings look at)."""
    order = list(range(count))
    random.Random(0).shuffle(order)
    return order


def spread_sample(path, limit):
    """``limit`` documents of the CSV split at ``path`` drawn evenly from all of it (a reservoir sample, seeded: the
    same every run), in the file's order (then shuffled as all of a split is: :func:`shuffled`), and their row
    numbers (from 1); all of it when it has no more. Not its first ``limit`` rows: some sets list their classes
    one after the other (dbpedia's train.csv: 40,000 rows of class 1, then of class 2, ...), and their first rows
    were a split of one class (fastText's script shuffles the whole file)."""
    rng = random.Random(0)
    kept = []  # (row number, label, text)
    for number, (label, text) in enumerate(iter_examples(path, "csv")):
        if number < limit:
            kept.append((number, label, text))
        else:
            slot = rng.randrange(number + 1)
            if slot < limit:
                kept[slot] = (number, label, text)
    if not kept:
        raise FastTextError(f"{path}: contains no labeled documents")
    kept.sort()
    return LabeledTexts([label for _, label, _ in kept], [text for _, _, text in kept]), [n + 1 for n, _, _ in kept]
