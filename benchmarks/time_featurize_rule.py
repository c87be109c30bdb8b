"""Native featurization time (Featurizer.fit, bigrams, best of 3) of the tree on PYTHONPATH: 100k synthetic Yelp-shaped
reviews, 50k with an HTML line break pair in the middle (IMDB-like), and 50k each ending in words outside ASCII
(Latin-1 accents; Chinese and an emoji), which text.lowered reads in Python. Run it on two trees alternately to compare
a change (docs/RESULTS.md 4, "The fixpoint text rule's cost", "The marks text rule's cost").

usage: OMP_NUM_THREADS=2 PYTHONPATH=TREE python benchmarks/time_featurize_rule.py
"""
import sys, time
from fasttext_lib.synthetic import generate_reviews
from fasttext_lib.features import Featurizer
from fasttext_lib import native_features as nf
assert nf.status()[0]
t = generate_reviews(100000, seed=0).texts
imdb = [" ".join(x.split()[:40]) + " <br /><br /> " + " ".join(x.split()[40:80]) for x in t[:50000]]
latin = [x + " très bon café, à bientôt" for x in t[50000:]]
cjk = [x + " 这家餐厅的菜非常好吃，服务也很周到 😀" for x in t[50000:]]
for name, docs in (("yelp100k", t), ("br50k", imdb), ("latin50k", latin), ("cjk50k", cjk)):
    best = 1e9
    for _ in range(3):
        s = time.perf_counter(); Featurizer.fit(docs, return_bags=True, ngrams=2); best = min(best, time.perf_counter() - s)
    print(name, round(best, 3), flush=True)
