"""The built-in sample: real English product-review sentences, shipped inside the package.

2,888 training and 722 test sentences from Amazon product reviews (the VADER dataset of Hutto &
Gilbert 2014, MIT licence: ``sample_data/ATTRIBUTION.md``), labelled ``negative`` / ``positive``.
It is what ``make demo``, notebook 01's ``dataset="sample"`` and ``python -m fasttext_lib sample``
train on: small enough to run in seconds, real enough that predictions and nearest-neighbour
words read like English. For Yelp-sized scale tests use :mod:`fasttext_lib.synthetic` instead.
"""
import os

SAMPLE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample_data")
SPLITS = ("train", "test")
NAME = "amazon_snippets"


def sample_path(split):
    """Local path of the sample's ``train`` or ``test`` split (Zhang et al. CSV, labels as words)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    return os.path.join(SAMPLE_DIR, f"{NAME}_{split}.csv")


def load_sample(split):
    """The ``train`` or ``test`` split as :class:`~fasttext_lib.data.LabeledTexts`."""
    from .data import read_labeled

    return read_labeled(sample_path(split))
