"""Where one bigram training step spends its time: native bag operators vs MXNet's generic ones.

Builds one real batch (``--batch-size`` synthetic Yelp-shaped reviews, bigrams hashed into 2M
buckets, as in bench_fasttext.py) and times each operator alone, ``nd.waitall()`` around it,
median of ``--repeats`` runs after a warm-up:

* generic route: ``take`` the batch's rows, ``dot(csr, dense)`` forward, ``dot(csr_t, dense)``
  backward (with the transpose built in numpy), MXNet's lazy ``sgd_update`` / ``adam_update``;
* native route (bag_ops.cc): ``fasttext_bag_mean`` from the table in place,
  ``fasttext_bag_mean_backward``, and SGD fused with the backward (``fasttext_bag_sgd_update``).

Usage: OMP_NUM_THREADS=2 PYTHONPATH=. python benchmarks/profile_step.py
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def median_ms(fn, repeats):
    from mxnet import nd

    fn()
    nd.waitall()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        nd.waitall()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[len(times) // 2]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000, help="corpus size the batch is drawn from")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--emsize", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)

    import mxnet as mx
    import numpy as np
    import pandas as pd
    from mxnet import nd

    from fasttext_lib import bag_ops
    from fasttext_lib.batches import BatchMaker
    from fasttext_lib.features import Featurizer
    from fasttext_lib.synthetic import generate_reviews
    from fasttext_lib.text import normalize_text
    from fasttext_lib.train import keep_freed_memory

    ok, why = bag_ops.status()
    if not ok:
        sys.exit(f"native bag operators unavailable: {why}")
    data = generate_reviews(args.docs, seed=0)
    featurizer, bags = Featurizer.fit([normalize_text(t) for t in data.texts], ngrams=2, return_bags=True)
    keep_freed_memory()  # as train() does
    rs = np.random.RandomState(0)
    table = nd.array(rs.uniform(-0.01, 0.01, (featurizer.num_rows, args.emsize)).astype(np.float32))
    maker = BatchMaker(bags, np.zeros(len(bags)), featurizer.num_rows)
    docs = rs.permutation(len(bags))[:args.batch_size]
    b = maker.make(docs)
    n, cols = b.size, len(b.rows)
    rows = nd.array(b.rows, dtype="int64")
    offsets, weights = nd.array(b.offsets, dtype="int64"), nd.array(b.weights)
    entry_rows, columns = nd.array(b.entry_rows, dtype="int32"), nd.array(b.columns, dtype="int32")
    bag = nd.sparse.csr_matrix((b.weights, b.columns, b.offsets), shape=(n, cols))
    bag_t = nd.sparse.csr_matrix((b.t_weights, b.t_columns, b.t_offsets), shape=(cols, n))
    dh = nd.array(rs.randn(n, args.emsize).astype(np.float32) * 1e-3)
    grad = nd.sparse.row_sparse_array((nd.sparse.dot(bag_t, dh), rows), shape=table.shape)
    sgd = mx.optimizer.get_updater(mx.optimizer.create("sgd", learning_rate=0.1, lazy_update=True))
    adam = mx.optimizer.get_updater(mx.optimizer.create("adam", learning_rate=1e-4, lazy_update=True))
    r = args.repeats
    timings = [
        ("build the batch in numpy, with transpose (generic)", median_ms(lambda: maker.make(docs), r)),
        ("build the batch in numpy, no transpose (native)", median_ms(lambda: maker.make(docs, with_transpose=False), r)),
        ("generic: take the batch's rows", median_ms(lambda: nd.take(table, rows), r)),
        ("generic: dot(bag, rows) forward", median_ms(lambda: nd.sparse.dot(bag, nd.take(table, rows)), r)
         - median_ms(lambda: nd.take(table, rows), r)),
        ("generic: dot(bag_t, dL/dh) backward", median_ms(lambda: nd.sparse.dot(bag_t, dh), r)),
        ("generic: lazy sgd_update", median_ms(lambda: sgd(0, grad, table), r)),
        ("generic: lazy adam_update", median_ms(lambda: adam(0, grad, table), r)),
        ("native: fasttext_bag_mean (forward, table in place)", median_ms(
            lambda: nd.fasttext_bag_mean(table, offsets, entry_rows, weights), r)),
        ("native: fasttext_bag_mean_backward", median_ms(
            lambda: nd.fasttext_bag_mean_backward(offsets, columns, weights, dh, num_rows=cols), r)),
        ("native: fasttext_bag_sgd_update (backward + SGD)", median_ms(
            lambda: nd.fasttext_bag_sgd_update(table, offsets, columns, weights, dh, rows, lr=0.1), r)),
    ]
    print(f"one bigram batch: {n} documents, {len(b.columns):,} bag entries, {cols:,} distinct rows of "
          f"{featurizer.num_rows:,}; emsize {args.emsize}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(pd.DataFrame(timings, columns=["step", "ms (median)"]).to_string(index=False, float_format=lambda v: f"{v:.1f}"))


if __name__ == "__main__":
    main()
