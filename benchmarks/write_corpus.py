"""Write a synthetic corpus in both formats (bench_e2e.write_corpus) for scale_ours.py / scale_fasttext.py.

usage: PYTHONPATH=. python benchmarks/write_corpus.py DIR TRAIN_DOCS TEST_DOCS SEED [--classes C] [--median-length L] [--cue-rate R]

The corpora of docs/RESULTS.md 3 ("Three more large corpora"):
    benchmarks/write_corpus.py /tmp/fasttext_lib_bench_e2e/yelp-130000-4 130000 38000 4
    benchmarks/write_corpus.py /tmp/fasttext_lib_bench_e2e/agshape-120000-4c 120000 7600 5 --classes 4 --median-length 38
    benchmarks/write_corpus.py /tmp/fasttext_lib_bench_e2e/fullshape-200000-5c 200000 10000 6 --classes 5 --median-length 80
The long-document ones ("Long documents at scale"):
    benchmarks/write_corpus.py /tmp/fasttext_lib_bench_e2e/long5c-200k 200000 20000 11 --classes 5 --median-length 350 --cue-rate 0.015
    benchmarks/write_corpus.py /tmp/fasttext_lib_bench_e2e/imdbshape-25k 25000 25000 12 --median-length 220 --cue-rate 0.02
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_e2e import write_corpus  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("directory")
p.add_argument("train_docs", type=int)
p.add_argument("test_docs", type=int)
p.add_argument("seed", type=int)
p.add_argument("--classes", type=int, default=2)
p.add_argument("--median-length", type=int, default=110)
p.add_argument("--cue-rate", type=float, default=0.08, help="the share of cue words (generate_reviews' cue_rate)")
a = p.parse_args()
print(write_corpus(a.directory, a.train_docs, a.test_docs, a.seed, num_classes=a.classes, median_length=a.median_length,
                   cue_rate=a.cue_rate))
