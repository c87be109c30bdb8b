"""Seconds to parse a Yelp-shaped CSV with a header row (``data.iter_examples``: the CSV records, the repeated-header
check, the documents; nothing tokenized), two trees' readers timed alternately, each run its own process.

    PYTHONPATH=. python benchmarks/csv_parse_time.py write /tmp/header.csv 120000     # ~100 MB, label,text header
    python benchmarks/csv_parse_time.py compare OLD_TREE NEW_TREE /tmp/header.csv [ROUNDS]

(``git archive main fasttext_lib | tar -x -C /tmp/old`` makes an OLD_TREE.) A header row is what puts every record
through the repeated-header check; a Zhang et al. file (no header) is read without it.
"""
import os
import subprocess
import sys

TIME_ONE = """
import sys, time
from fasttext_lib.data import iter_examples
started, cpu = time.perf_counter(), time.process_time()
n = sum(1 for _ in iter_examples(sys.argv[1]))
print(f"{time.perf_counter() - started:.3f} {time.process_time() - cpu:.3f} {n}")
"""


def write(path, docs):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.synthetic import generate_reviews
    from fasttext_lib.writers import write_csv

    data = generate_reviews(docs, seed=7)
    body = path + ".body"
    write_csv(LabeledTexts(data.labels, data.texts), body)  # Zhang et al. rows ("2","the text")
    with open(path, "wb") as out, open(body, "rb") as rows:
        out.write(b'"label","text"\n')
        while True:
            chunk = rows.read(1 << 24)
            if not chunk:
                break
            out.write(chunk)
    os.remove(body)
    print(f"{path}: {docs} documents, {os.path.getsize(path) / 1e6:.0f} MB")


def compare(trees, path, rounds):
    times = {tree: [] for tree in trees}
    for _ in range(rounds):
        for tree in trees:  # alternately, so that a change in the machine's load falls on both
            env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1")
            out = subprocess.run([sys.executable, "-c", TIME_ONE, path], env=env, capture_output=True, text=True,
                                 check=True, cwd="/").stdout.split()
            times[tree].append((float(out[0]), float(out[1]), int(out[2])))
            print(f"{tree}: {out[0]} s wall, {out[1]} s CPU, {out[2]} documents", flush=True)
    for tree, runs in times.items():
        walls = sorted(r[0] for r in runs)
        print(f"{tree}: wall median {walls[len(walls) // 2]:.3f} s, min {walls[0]:.3f} s ({', '.join(f'{r[0]:.3f}' for r in runs)})")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 120_000)
    else:
        compare(sys.argv[2:4], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else 3)
