"""`make demo`: the whole pipeline on the built-in sample, against a local S3 server.

1. start moto's S3 server on 127.0.0.1 (free port, dummy credentials) and create a bucket;
2. write the synthetic sample (Zhang CSV) to s3://BUCKET/demo/data/;
3. train from S3, saving the bundle to s3://BUCKET/demo/models/sample/;
4. evaluate and predict from the S3 bundle; print the per-epoch history and where things are.

Extra arguments are passed to `train` (e.g. `make demo ARGS='--optimizer sgd --epochs 3'`).
"""
import json
import os
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "build", "demo")


def cli(*args, input=None):
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", *args], cwd=ROOT, text=True, input=input,
                       stdout=subprocess.PIPE)
    if r.returncode:
        sys.exit(f"demo failed: fasttext_lib {args[0]} exited {r.returncode}")
    return r.stdout


def main(extra):
    import logging

    import boto3
    import pandas as pd
    from moto.server import ThreadedMotoServer

    from fasttext_lib.data import read_labeled

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server's per-request log

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    os.environ.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_ACCESS_KEY_ID="demo",
                      AWS_SECRET_ACCESS_KEY="demo", AWS_DEFAULT_REGION="us-east-1")
    try:
        bucket = "fasttext-demo"
        boto3.client("s3").create_bucket(Bucket=bucket)
        data, model = f"s3://{bucket}/demo/data", f"s3://{bucket}/demo/models/sample"
        print(f"local S3 server on 127.0.0.1:{port}; writing the sample to {data}/", flush=True)
        cli("sample", "--output", data)
        lines = cli("train", "--train", f"{data}/train.csv", "--validation", f"{data}/test.csv", "--output", model,
                    "--epochs", "5", *extra)
        history = pd.DataFrame([json.loads(line) for line in lines.splitlines() if line.startswith("{")]).set_index("epoch")
        metrics = json.loads(cli("evaluate", "--model", model, "--data", f"{data}/test.csv").splitlines()[-1])
        held_out = read_labeled(f"{data}/test.csv").head(3)  # the sample's words are synthetic: use its own reviews
        reviews = held_out.texts
        predictions = [json.loads(line) for line in cli("predict", "--model", model, input="\n".join(reviews) + "\n").splitlines()]
        os.makedirs(OUT, exist_ok=True)
        history.to_csv(os.path.join(OUT, "history.csv"))
        print("\nper-epoch history:\n" + history.round(4).to_string())
        print(f"\ntest accuracy {metrics['accuracy']:.4f}, loss {metrics['loss']:.4f} on {metrics['n']} reviews")
        print("held-out reviews: predicted (probability) / true label / text")
        for review, truth, p in zip(reviews, held_out.labels, predictions):
            print(f"  {p['label']} ({p['probability']:.2f}) / {truth} / {review[:70]}...")
        print(f"\nmodel bundle: {model}/ (on the local server, gone when it stops)\nhistory: {os.path.join(OUT, 'history.csv')}")
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
