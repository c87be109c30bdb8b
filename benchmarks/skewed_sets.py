"""Skewed two-class confirmation sets for docs/RESULTS.md 3, "Skewed classes: a skew term tried".

Built from the shared real sets and the sets ``bench_real.py --vader --extra`` caches (movie_snippets, tweets,
uci_sentences), each split thinned the way ``bench_real.py --imbalanced`` thins class 1, but with other classes and
shares: one class's rows kept with probability ``keep`` (``random.Random(5)``), the other class whole. The result is
a folder of ``<name>_train.csv`` / ``<name>_test.csv`` that ``bench_real.py --real-dir`` reads::

    PYTHONPATH=. python benchmarks/bench_real.py --vader --extra --sets movie_snippets,tweets,uci_sentences --seeds 1
    python benchmarks/skewed_sets.py build/real_cache build/skewed
    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_real.py --real-dir build/skewed --seeds 3 --sets movie_k15c1

With ``--one-vs-rest`` it builds instead the confirmation sets of "Skewed classes: a held-out test of the words": one
class of a multi-class set (``bench_real.py --multiclass --extra`` caches them) against all the others, so that the
rarer class is a natural one (a neutral middle, a topic), not a thinned one::

    python benchmarks/skewed_sets.py --one-vs-rest build/real_cache build/skewed2
"""
import csv
import os
import random
import sys
from collections import Counter

# (source, class thinned ("minor": the rarer one), share of its rows kept)
PLANS = [("movie_snippets", "1", 0.15), ("movie_snippets", "2", 0.15), ("amazon_snippets", "2", 0.15),
         ("nyt_editorials", "2", 0.15), ("tweets", "2", 0.15), ("uci_sentences", "2", 0.15),
         ("movie_snippets", "1", 0.30), ("amazon_snippets", "1", 0.30), ("drug_reviews", "minor", 0.40)]
SHORT = {"movie_snippets": "movie", "amazon_snippets": "amazon", "nyt_editorials": "nyt", "tweets": "tweets",
         "uci_sentences": "uci", "drug_reviews": "drug"}
SHARED = ("amazon_snippets", "nyt_editorials", "drug_reviews")  # in ../shared/data/real; the others in the cache


# (name, multi-class source, the class kept as class 2; every other class becomes class 1)
ONE_VS_REST = [("amazon5_c1", "amazon_snippets_5class", "1"), ("amazon5_c5", "amazon_snippets_5class", "5"),
               ("amazon3_neu", "amazon_snippets_3class", "2"), ("movie3_neu", "movie_snippets_3class", "2"),
               ("movie5_c1", "movie_snippets_5class", "1"), ("movie5_c5", "movie_snippets_5class", "5"),
               ("drug3_neu", "drug_reviews_3class", "2"), ("nyt3_c3", "nyt_editorials_3class", "3"),
               ("tweets3_neu", "tweets_3class", "2"), ("r8_c2", "reuters_r8", "2"), ("bbc_c2", "bbc_news", "2")]


def one_vs_rest(cache, out):
    os.makedirs(out, exist_ok=True)
    for name, source, kept in ONE_VS_REST:
        for split in ("train", "test"):
            with open(os.path.join(cache, f"{source}_{split}.csv"), encoding="utf-8", newline="") as f:
                rows = [["2" if r[0] == kept else "1"] + r[1:] for r in csv.reader(f)]
            with open(os.path.join(out, f"{name}_{split}.csv"), "w", encoding="utf-8", newline="") as f:
                csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
            print(name, split, len(rows), round(sum(r[0] == "2" for r in rows) / len(rows), 3))


def main(cache, out, real_dir=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "real")):
    os.makedirs(out, exist_ok=True)
    for source, thinned, keep in PLANS:
        name = f"{SHORT[source]}_k{round(keep * 100)}c{thinned}"
        for split in ("train", "test"):
            with open(os.path.join(real_dir if source in SHARED else cache, f"{source}_{split}.csv"),
                      encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f))
            cls = min(Counter(r[0] for r in rows).items(), key=lambda kv: kv[1])[0] if thinned == "minor" else thinned
            rng = random.Random(5)
            rows = [r for r in rows if r[0] != cls or rng.random() < keep]
            with open(os.path.join(out, f"{name}_{split}.csv"), "w", encoding="utf-8", newline="") as f:
                csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
            shares = {k: round(v / len(rows), 3) for k, v in sorted(Counter(r[0] for r in rows).items())}
            print(name, split, len(rows), shares)


if __name__ == "__main__":
    if sys.argv[1] == "--one-vs-rest":
        one_vs_rest(*sys.argv[2:])
    else:
        main(*sys.argv[1:])
