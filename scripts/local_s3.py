"""A local S3 endpoint for demos and notebook checks: moto's server mode on 127.0.0.1.

``with local_s3("fasttext-demo"):`` starts the server on a free port, points every AWS client of
this process and its children at it (``AWS_ENDPOINT_URL``, dummy credentials, a region), creates
the bucket, and stops the server afterwards. As a script it wraps a command:

    python scripts/local_s3.py --bucket fasttext-demo -- python -m pytest --nbval notebooks
"""
import argparse
import contextlib
import logging
import os
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def local_s3(bucket="fasttext-demo"):
    import boto3
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server's per-request log
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    os.environ.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_ACCESS_KEY_ID="local",
                      AWS_SECRET_ACCESS_KEY="local", AWS_DEFAULT_REGION="us-east-1")
    # Kernels started from here must import this checkout's fasttext_lib whatever their cwd.
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    try:
        boto3.client("s3").create_bucket(Bucket=bucket)
        yield f"s3://{bucket}"
    finally:
        server.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description="run a command with a local S3 server and bucket")
    parser.add_argument("--bucket", default="fasttext-demo")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    with local_s3(args.bucket):
        return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
