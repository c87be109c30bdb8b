"""The one exception type a user can cause.

Everything a user can get wrong (a bad file, a missing bucket, a model that does not match its
vocabulary) is raised as :class:`FastTextError` with a one-line message; the CLI prints it as
``error: ...`` and exits non-zero without a traceback. Anything else is a bug and keeps its traceback.
"""


class FastTextError(Exception):
    """A user-caused failure with a one-line, actionable message."""
