"""Seconds to count the tokens of the first 10k training documents, as resolving the settings does
(``schedule.mean_tokens``), natively or in Python (FASTTEXT_LIB_NATIVE=0). Usage, outside the tree:

    PYTHONPATH=TREE python benchmarks/mean_tokens_time.py native
    FASTTEXT_LIB_NATIVE=0 PYTHONPATH=TREE python benchmarks/mean_tokens_time.py python

Reads bench_e2e.py's 560k corpus (/tmp/fasttext_lib_bench_e2e/yelp-560000-2/train.csv; another CSV as argv[2]).
"""
import sys, time
from fasttext_lib.data import read_labeled
from fasttext_lib.schedule import mean_tokens
data = read_labeled(sys.argv[2] if len(sys.argv) > 2 else "/tmp/fasttext_lib_bench_e2e/yelp-560000-2/train.csv", limit=10000)
texts = data.texts[:10000]
mean_tokens(texts[:10])  # (the native library loaded)
best = []
for _ in range(3):
    t = time.perf_counter(); m = mean_tokens(texts); best.append(time.perf_counter() - t)
print(f"{sys.argv[1]}: mean {m:.4f} tokens, {sorted(best)[1]:.3f} s median of 3 ({', '.join(f'{b:.3f}' for b in best)})")
