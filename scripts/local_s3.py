"""A local S3 endpoint for demos and notebook checks: moto's server mode on 127.0.0.1.

``with local_s3("fasttext-demo") as endpoint:`` starts the server on a free port, points every AWS
client of this process and its children at it (``AWS_ENDPOINT_URL``, dummy credentials, a region),
creates the bucket (if one is named), and afterwards stops the server and restores the environment.
The test suite's ``s3_server`` fixture uses it too. As a script it wraps a command:

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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_s3(bucket=None):
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server's per-request log
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
           "AWS_DEFAULT_REGION": "us-east-1",
           # kernels and subprocesses started from here import this checkout's fasttext_lib, whatever their cwd
           "PYTHONPATH": os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        if bucket:
            boto3.client("s3").create_bucket(Bucket=bucket)
        yield endpoint
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


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
