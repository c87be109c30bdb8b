"""Seconds to read and count a training file (``data.read_counted``, as ``train`` reads ``--train``), for timing
the readers against another commit. Usage (outside both trees: ``python -m`` in a tree imports that tree's code):

    OMP_NUM_THREADS=1 PYTHONPATH=TREE python benchmarks/read_speed.py FILE

The native encoder uses every CPU the process may run on (``native_features.threads()``): prefix
``taskset -c 0`` to time one thread.
"""
import sys
import time

from fasttext_lib.data import read_counted

started, cpu = time.perf_counter(), time.process_time()
data = read_counted(sys.argv[1], "auto")
print(f"{time.perf_counter() - started:.2f} s wall, {time.process_time() - cpu:.2f} s CPU, {len(data.labels):,} documents")
