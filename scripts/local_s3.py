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
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST = "127.0.0.1"


class ServerError(RuntimeError):
    """The local server could not start; its message is one line."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve():
    """moto's S3 app on HOST at a port the OS picks as it binds: ``(server, thread)``.

    moto's ThreadedMotoServer was given a port picked free beforehand (free_port): another process could take it in
    between, and as it binds in its own thread, the failure killed that thread while start() waited for it forever
    (``make demo`` and the suite's s3_server hung). The socket is bound here, to port 0 (the OS picks a free one as
    it binds: no such moment), in the caller's thread, and handed to the server; a failure to bind is raised as one
    line (werkzeug's own binding printed its message and called sys.exit).
    """
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    try:
        with socket.socket() as listening:
            listening.bind((HOST, 0))
            listening.listen(128)
            # the server serves a duplicate of this descriptor (socket.fromfd): ours can close
            server = make_server(HOST, listening.getsockname()[1], DomainDispatcherApplication(create_backend_app),
                                 threaded=True, request_handler=MotoRequestHandler, fd=listening.fileno())
    except OSError as exc:
        raise ServerError(f"cannot start the local S3 server on {HOST}: {exc.strerror or exc}") from None
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


@contextlib.contextmanager
def local_s3(bucket=None):
    import boto3

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server's per-request log
    server, thread = _serve()
    port = server.server_address[1]
    endpoint = f"http://{HOST}:{port}"
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
        server.shutdown()
        thread.join()
        server.server_close()
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
    try:
        with local_s3(args.bucket):
            return subprocess.call(command)
    except ServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
