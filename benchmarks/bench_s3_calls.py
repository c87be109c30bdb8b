"""What the library's S3 calls cost the client, for one or more source trees (e.g. main and a branch).

Run under a local S3 server (its CPU is the wrapper's, not the measured processes'):

    python scripts/local_s3.py --bucket bench -- python benchmarks/bench_s3_calls.py --trees /tmp/before . --runs 5

Each run is a fresh CLI process per command, the trees taking turns: ``sample --output s3://...`` (the built-in
sample's two files written to S3), ``train`` from those S3 files to an S3 bundle (1 epoch: the training itself is
a small part), and ``predict`` of 100 reviews with that bundle read from S3. Prints each process's wall and CPU
seconds (user + system, children included), then the medians per tree and command.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = ("sample", "train", "predict")


def run(tree, argv, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fasttext_lib", *argv], cwd=tree, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{tree}: {' '.join(argv)} failed: {done.stderr.strip()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="+", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bucket", default="bench")
    args = parser.parse_args(argv)
    if "AWS_ENDPOINT_URL" not in os.environ:
        sys.exit("error: run under scripts/local_s3.py (see this file's docstring)")
    reviews = os.path.join(tempfile.mkdtemp(), "reviews.txt")
    with open(reviews, "w") as f:
        f.write("".join(f"the pasta was great and the staff were friendly {i}\n" for i in range(100)))
    results = {(tree, c): [] for tree in args.trees for c in COMMANDS}
    for r in range(args.runs):
        for t, tree in enumerate(args.trees):
            tree = os.path.abspath(tree)
            env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1")
            where = f"s3://{args.bucket}/run-{r}-{t}"
            steps = {"sample": ["sample", "--output", f"{where}/data"],
                     "train": ["train", "--train", f"{where}/data/train.csv", "--epochs", "1", "--output",
                               f"{where}/model"],
                     "predict": ["predict", "--model", f"{where}/model", "--input", reviews]}
            for command in COMMANDS:
                wall, cpu = run(tree, steps[command], env)
                results[(tree, command)].append((wall, cpu))
                print(f"run {r} {tree} {command}: wall {wall:.2f} s, cpu {cpu:.2f} s", flush=True)
    print("\n| tree | command | wall s (median) | CPU s (median) |\n|---|---|---|---|")
    for (tree, command), values in results.items():
        print(f"| {tree} | {command} | {statistics.median(v[0] for v in values):.2f} | "
              f"{statistics.median(v[1] for v in values):.2f} |")


if __name__ == "__main__":
    main()
