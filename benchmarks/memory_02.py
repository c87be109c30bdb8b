"""Peak memory of notebook 02's code against the command line's ``train`` with its settings, on the same data.

Notebook 01's synthetic route (``generate_reviews(train + test, seed=0)``, written as ``data/synthetic.train`` and
``.test``) into a local S3 server (scripts/local_s3.py), then, in alternating pairs, each in its own child process
measured through GNU time (benchmarks/bench_e2e.run_child: the peak is the child's own):

* **CLI**: ``python -m fasttext_lib train --train .../synthetic.train --validation .../synthetic.test --epochs 5
  --ngrams 2 --seed 42 --no-progress``: 02's defaults (sgd, 2M buckets, emsize 100, lr and batch from the data);
* **notebook**: 02's own code cells, read from ``notebooks/02_train_gpu.ipynb`` and run in order in one namespace
  (its parameters cell, then ``dataset = "synthetic"`` and ``output_dir`` as papermill would inject them; matplotlib's
  Agg backend), with a phase mark after each cell: its resident memory and the cell's own peak
  (benchmarks/trace_memory.py's marks), on stderr. No kernel: IPython and ZeroMQ are not counted.

Usage (from the repository root; runs for minutes at the default size):

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/memory_02.py --train-docs 94000 --test-docs 6000 --pairs 2
"""
import argparse
import contextlib
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
BUCKET, PREFIX, NOTEBOOK = "fasttext-demo", "fasttext", os.path.join(ROOT, "notebooks", "02_train_gpu.ipynb")


def write_data(train_docs, test_docs, output_dir):
    """01's synthetic route, written where 02 reads it."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.synthetic import generate_reviews
    from fasttext_lib.workspace import Workspace
    from fasttext_lib.writers import write_fasttext_splits

    corpus = generate_reviews(train_docs + test_docs, seed=0)
    splits = {"train": corpus.head(train_docs),
              "test": LabeledTexts(corpus.labels[train_docs:], corpus.texts[train_docs:])}
    return write_fasttext_splits(splits, Workspace(BUCKET, PREFIX, output_dir).data, "synthetic")


def run_notebook_cells(output_dir):
    """02's code cells in order, each ended by a phase mark (trace_memory); the table of phases on stderr."""
    import trace_memory as tm

    import matplotlib
    matplotlib.use("Agg")
    with open(NOTEBOOK, encoding="utf-8") as f:
        cells = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    namespace = {"__name__": "__main__"}
    for number, cell in enumerate(cells, 1):
        source = "".join(cell["source"])
        tm.mark(f"cell {number}: {source.strip().splitlines()[-1][:30]}")
        exec(compile(source, f"<cell {number}>", "exec"), namespace)
        if "parameters" in cell.get("metadata", {}).get("tags", []):  # (as papermill injects them)
            namespace.update(dataset="synthetic", output_dir=output_dir)
    tm.mark("end")
    with contextlib.redirect_stderr(sys.stdout):  # (run_child returns the child's stdout)
        tm.report()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-docs", type=int, default=94000)
    parser.add_argument("--test-docs", type=int, default=6000)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--notebook-cells", metavar="OUTPUT_DIR", help=argparse.SUPPRESS)  # (the child's part)
    args = parser.parse_args()
    if args.notebook_cells:
        return run_notebook_cells(args.notebook_cells)
    from bench_e2e import run_child
    from local_s3 import local_s3

    with local_s3(BUCKET), tempfile.TemporaryDirectory() as out:
        written = write_data(args.train_docs, args.test_docs, out)
        cli = [sys.executable, "-m", "fasttext_lib", "train", "--train", written["train"], "--validation",
               written["test"], "--output", f"s3://{BUCKET}/{PREFIX}/models/cli", "--overwrite", "--epochs", "5",
               "--ngrams", "2", "--seed", "42", "--no-progress"]
        notebook = [sys.executable, os.path.abspath(__file__), "--notebook-cells", out]
        for pair in range(1, args.pairs + 1):
            for name, argv in (("CLI train", cli), ("notebook 02's cells", notebook)):
                _, peak_mb, stdout = run_child(argv, env={"MPLBACKEND": "Agg"})
                print(f"pair {pair}: {name}: peak RSS {peak_mb:,.0f} MiB ({args.train_docs} training documents, "
                      f"{args.test_docs} test)", flush=True)
                table = stdout[stdout.find("phase "):] if argv is notebook else ""
                print(table, end="", flush=True)


if __name__ == "__main__":
    sys.exit(main())
