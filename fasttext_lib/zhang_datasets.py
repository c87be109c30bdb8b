"""The Zhang et al. (2015) text classification datasets: each archive's URL (or its copy under a mirror), size,
md5 and number of classes, and what its classes mean.

These are the archives fastText's ``classification-example.sh`` trains on (Yelp polarity, ag_news,
dbpedia, ...), from the public fast.ai mirror; download.py fetches and prepares them.
"""
import os
import pathlib
import posixpath
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlparse

from . import label_names
from .errors import FastTextError

SPLITS = ("train", "test")  # the splits each archive holds, as <name>_csv/train.csv and test.csv


@dataclass(frozen=True)
class ZhangDataset:
    """One dataset archive: where it lives, what it must hash to, and how many classes it has."""

    name: str
    url: str
    size: int  # bytes of the .tgz
    md5: str
    num_classes: int

    @property
    def filename(self):
        return posixpath.basename(urlparse(self.url).path)


def _entry(name, size, md5, num_classes):
    return ZhangDataset(name, f"https://s3.amazonaws.com/fast-ai-nlp/{name}_csv.tgz", size, md5, num_classes)


# Sizes and md5 sums as listed in fastai's dataset checks file (fastai/data/checks.txt) for the
# fast-ai-nlp mirror of Zhang, Zhao & LeCun (2015), "Character-level Convolutional Networks for
# Text Classification".
DATASETS = {d.name: d for d in (
    _entry("ag_news", 11784419, "b86f328f4dbd072486591cb7a5644dcd", 4),
    _entry("amazon_review_polarity", 688339454, "676f7e5208ec343c8274b4bb085bc938", 2),
    _entry("amazon_review_full", 643695014, "4a1196cf0adaea22f4bc3f592cddde90", 5),
    _entry("dbpedia", 68341743, "239c7837b9e79db34486f3de6a00e38e", 14),
    _entry("sogou_news", 384269937, "950f1366d33be52f5b944f8a8b680902", 5),
    _entry("yahoo_answers", 319476345, "0632a0d236ef3a529c0fa4429b339f68", 10),
    _entry("yelp_review_polarity", 166373201, "48c8451c1ad30472334d856b5d294807", 2),
    _entry("yelp_review_full", 196146755, "1efd84215ea3e30d90e4c33764b889db", 5),
)}


def get_dataset(name_or_spec):
    """A registry name or a :class:`ZhangDataset` (tests and private mirrors pass their own)."""
    if isinstance(name_or_spec, ZhangDataset):
        return name_or_spec
    try:
        return DATASETS[name_or_spec]
    except KeyError:
        raise FastTextError(f"unknown dataset {name_or_spec!r}; choose one of {', '.join(sorted(DATASETS))}") from None


_MIRROR_SCHEMES = ("http", "https", "ftp", "file")  # what urllib opens


def archive_url(spec, base_url):
    """The URL of ``spec``'s archive: its own, or the file of that name under ``base_url``, a URL or a local folder
    (an offline machine's copy of the archives). A folder, a URL without a scheme (``mirror.local/data``) or one
    urllib cannot parse was a ValueError traceback ('unknown url type')."""
    if base_url is None:
        return spec.url

    def refused(why):
        return FastTextError(f"cannot download from the mirror {base_url!r}: {why}")

    try:
        scheme = urlparse(base_url).scheme.lower()
    except ValueError as exc:  # (http://[::1: "Invalid IPv6 URL")
        raise refused(exc) from None
    if scheme not in _MIRROR_SCHEMES:
        if scheme and len(scheme) > 1 and not base_url[len(scheme) + 1:].startswith("/"):  # (mirror.local:8000/data)
            raise refused(f"it has no scheme: write http://{base_url} (or https://)")
        if scheme and len(scheme) > 1:  # (a letter: a Windows drive, C:\mirror)
            raise refused(f"{scheme}:// is not read here, only {', '.join(s + '://' for s in _MIRROR_SCHEMES)} URLs "
                          f"or a local folder (or copy the archive {spec.filename} into the cache folder: a verified "
                          f"archive there is used as it is)")
        if not os.path.isdir(base_url):
            raise refused("it is no URL (http://, https://, ...) and no folder")
        base_url = pathlib.Path(base_url).resolve().as_uri()
    url = base_url.rstrip("/") + "/" + spec.filename
    try:
        urllib.request.Request(url)
    except ValueError as exc:
        raise refused(exc) from None
    return url


def dataset_label_names(spec, classes_file=None):
    """What ``spec``'s classes mean: the built-in table (label_names.KNOWN) for the registry's
    datasets, else the archive's own ``classes.txt`` (``classes_file``: extracted); ``{}`` when neither says."""
    if spec.name in label_names.KNOWN:
        return dict(label_names.KNOWN[spec.name])
    if not classes_file:
        return {}
    return label_names.read_file(classes_file, where=f"{spec.filename}:{spec.name}_csv/{label_names.ZHANG_FILE}")
