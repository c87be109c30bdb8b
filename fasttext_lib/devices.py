"""Device specs (``ctx``) -> MXNet contexts, for training and serving alike."""
from .errors import FastTextError


def parse_ctx(spec="auto"):
    """``auto`` | ``cpu`` | ``gpu`` | ``gpu:N`` | ``gpu:0,1`` | a list of those -> list of mx.Context.

    ``auto`` is every GPU when ``mx.context.num_gpus() > 0``, else the CPU.
    """
    import mxnet as mx

    if isinstance(spec, (list, tuple)):
        return [c for s in spec for c in parse_ctx(s)]
    if isinstance(spec, mx.Context):
        return [spec]
    spec = str(spec).strip().lower()
    num_gpus = mx.context.num_gpus()
    if spec == "auto":
        return [mx.gpu(i) for i in range(num_gpus)] or [mx.cpu()]
    if spec == "cpu":
        return [mx.cpu()]
    if spec.startswith("cpu:"):  # several CPU "devices" exercise the multi-device path without GPUs
        return [mx.cpu(int(i)) for i in spec[4:].split(",")]
    if spec == "gpu" or spec.startswith("gpu:"):
        ids = [0] if spec == "gpu" else [int(i) for i in spec[4:].split(",") if i.strip()]
        if num_gpus == 0:
            raise FastTextError(f"ctx {spec!r} asks for a GPU but none is visible (mx.context.num_gpus() == 0)")
        missing = [i for i in ids if i >= num_gpus]
        if missing:
            raise FastTextError(f"ctx {spec!r}: only {num_gpus} GPU(s) visible")
        return [mx.gpu(i) for i in ids]
    raise FastTextError(f"unknown ctx {spec!r}: use auto, cpu, gpu, gpu:N or gpu:0,1")


def describe_ctx(ctxs):
    return ", ".join(str(c) for c in ctxs)
