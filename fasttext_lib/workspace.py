"""Where one run's files live: its S3 prefix (data, models) and a local folder (figures, tables).

The notebooks, the CLI examples and the SageMaker helpers all use one layout under
``s3://{bucket}/{prefix}/``: ``data/`` for the prepared ``.train``/``.test`` files and ``models/``
for bundles (sagemaker_utils.py adds ``code/``, ``jobs/``, ``checkpoints/``, ``serving/``). Figures
and tables go to a local ``output_dir``; a relative one is taken from the working directory, which
Jupyter, ``make demo`` and nbval all set to the notebook's folder (papermill's command line keeps the
shell's unless given ``--cwd``).
"""
import os
from pathlib import Path

from .errors import check_bool


class Workspace:
    """``Workspace(bucket, prefix, output_dir)``: ``.data`` and ``.models`` (``s3://`` prefixes),
    ``.out`` (a local folder, created) and ``.show(name)`` (a path to print: relative, as given)."""

    def __init__(self, bucket, prefix, output_dir):
        if not bucket or "/" in str(bucket):
            raise ValueError(f"bucket must be a bucket name (no s3://, no /), got {bucket!r}")
        self.base = f"s3://{bucket}/{str(prefix).strip('/')}" if prefix else f"s3://{bucket}"
        self.data = f"{self.base}/data"
        self.models = f"{self.base}/models"
        self._shown = Path(output_dir)
        self.out = self._shown.resolve()
        self.out.mkdir(parents=True, exist_ok=True)

    def show(self, name):
        """``output_dir/name`` as the user wrote ``output_dir``: printed output stays machine-independent."""
        return str(self._shown / name)

    def model(self, run_name):
        return f"{self.models}/{run_name}"

    def __repr__(self):
        return f"Workspace(s3: {self.base}, local: {os.path.relpath(self.out)})"


def check_flags(**flags):
    """A notebook's yes/no parameters, each True or False (one error naming the first that is not).
    papermill's ``-p autotune false`` passes the text ``'false'`` (only ``True`` and ``False`` become
    booleans), which Python takes as true: the autotune search (or a billed training job) ran."""
    for name, value in flags.items():
        check_bool(value, name, f" (papermill: -p {name} True, or -p {name} False)")
