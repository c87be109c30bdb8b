"""A user's mistake shown as one line in a notebook, as the CLI prints it.

In an IPython kernel (Jupyter, papermill, nbval) a :class:`~fasttext_lib.errors.FastTextError` raised in a cell is
shown as ``error: <message>`` alone instead of a traceback through the library that ends in that message. IPython
keeps one custom exception handler per kernel, so ours is chained to one installed before it and can be taken out
again. The notebooks' check cell turns it on (notebook_params.check_parameters).

The Stop button pressed during a training (a KeyboardInterrupt that train told the epoch and step of:
stops.stopped_line) is shown so too, ``error: stopped by the user at epoch 2, step 31; ...``, rather than a traceback
through the training loop; one that ends an autotune search says where in the search it came (stops.note_stop_line:
``error: stopped by the user during autotune trial 1 of the search; ...``). A Stop during a write that left files
behind (a pair on S3 that may now be mixed, files its cleanup could not remove, a training's checkpoint that the
cell run again resumes from) is the CLI's line for it (stops.stop_message). The cell still fails (papermill sees a KeyboardInterrupt), and any other KeyboardInterrupt keeps
IPython's traceback.
"""
import sys

from .errors import FastTextError, error_line
from .stops import stop_left, stop_message, stopped_line

# How a notebook's user resumes from the checkpoint a stopped train(checkpoint_dir=...) kept (stops.stop_message)
RESUME_BY_RUNNING_THE_CELL = ": run the cell again to resume from it"
# The exceptions our handler is installed for: a KeyboardInterrupt only where stopped_line tells its place, or where
# it left what its line must say (stop_left).
_OURS = (FastTextError, KeyboardInterrupt)


def _is_ours(value):
    return isinstance(value, FastTextError) or (isinstance(value, KeyboardInterrupt) and (
        stopped_line(value) is not None or stop_left(value)))


def _error_as_line(shell, etype, value, tb, tb_offset=None):
    """IPython's handler for :class:`FastTextError` (and a Stop in training): the cell's error output is ``error:
    <message>`` alone. Another KeyboardInterrupt (a Stop elsewhere) is shown as IPython shows it."""
    if not _is_ours(value):
        # A Stop in the cell that imports the SDK (02's bundle cell: import sagemaker takes seconds) came after rich's
        # display was put in and before the cell's sagemaker_session() takes it out: a boxed traceback sent as display
        # output, no error for papermill or nbclient to read, and rich's display kept for every later cell's error.
        _drop_sdk_traceback_display()
        return shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    # (the CLI's line for a stop; a checkpoint kept is resumed from as the cell is run again)
    line = error_line(value if isinstance(value, FastTextError) else stop_message(value, RESUME_BY_RUNNING_THE_CELL))
    # The error output (papermill, nbclient and Jupyter read it), by the shell's class: ``import sagemaker`` installs
    # rich's traceback display over the instance's method (sagemaker_core's logger calls rich.traceback.install),
    # which ignores the line and shows the whole traceback, as display output papermill does not report.
    type(shell)._showtraceback(shell, etype, value, [line])
    return [line]


class _ChainedHandler:
    """The kernel's custom exception handler while ours is installed over another one (IPython keeps one):
    a :class:`FastTextError` is shown as its line, every other exception the earlier handler took goes to it."""

    def __init__(self, previous_types, previous_handler):
        self.previous_types, self.previous_handler = previous_types, previous_handler

    def __call__(self, shell, etype, value, tb, tb_offset=None):
        if _is_ours(value) or not isinstance(value, self.previous_types):  # (a plain Stop: IPython's traceback)
            return _error_as_line(shell, etype, value, tb, tb_offset)
        return self.previous_handler(etype, value, tb, tb_offset=tb_offset)  # bound already (set_custom_exc)


def show_errors_as_lines():
    """In an IPython kernel (Jupyter, papermill, nbval), show a :class:`FastTextError` (a user's mistake: a bad
    parameter, a missing S3 object, a bucket that is not there) as one line, ``error: <message>``, as the CLI
    prints it, rather than a 20-line traceback through the check cell and the library that ends in the message.
    The cell still fails (papermill stops, exit 1); any other exception keeps its traceback. Outside IPython:
    nothing.

    IPython has one custom exception handler: one the user (or another library) installed before is kept, and
    still handles every other exception it was installed for (a FastTextError is ours, even where that handler's
    types, such as ``Exception``, include it); :func:`stop_showing_errors_as_lines` puts it back as it was."""
    shell = _kernel_shell()
    if shell is None or _installed(shell):
        return
    previous = tuple(getattr(shell, "custom_exceptions", ()) or ())
    chained = _ChainedHandler(previous, shell.CustomTB) if previous else None
    if chained is None:
        shell.set_custom_exc(_OURS, _error_as_line)
    else:
        shell.set_custom_exc(previous + _OURS, chained)
    shell._fasttext_chained = chained
    shell._fasttext_handler = shell.CustomTB  # what set_custom_exc installed: ours while the kernel still has it
    shell.events.register("pre_run_cell", _drop_sdk_traceback_display)


# What rich.traceback.install sets on the shell, over IPython's own methods.
_RICH_DISPLAY = ("_showtraceback", "showtraceback", "showsyntaxerror")


def _drop_sdk_traceback_display(*_info):
    """Take rich's traceback display out of the kernel again where the sagemaker SDK put it there (importing
    ``sagemaker`` imports sagemaker_core, whose logger calls ``rich.traceback.install``): every exception after it
    was a boxed traceback sent as display output, not as the cell's error, so papermill said "Exception encountered
    at In [N]:" and nothing else, and ``make demo`` named no error. Run before each cell while our display is on,
    and by :func:`~fasttext_lib.sagemaker_utils.sagemaker_session` (for the cell that imported the SDK). A rich
    display installed by anything else is left alone."""
    shell = _kernel_shell()
    sdk = sys.modules.get("sagemaker_core.main.utils")
    if shell is None or not getattr(shell, "_fasttext_handler", None) or not getattr(
            sdk, "textual_rich_console_and_traceback_enabled", False):
        return
    for name in _RICH_DISPLAY:
        if getattr(vars(shell).get(name), "__module__", None) == "rich.traceback":
            delattr(shell, name)  # the instance's: the class's method (IPython's, ipykernel's) again


def _kernel_shell():
    """The IPython shell this code runs in, or None: a kernel has imported IPython; elsewhere it is not imported
    for this."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _installed(shell):
    """Whether the kernel's handler is the one we installed (alone or chained to an earlier one): installing it
    twice would chain it to itself. Told by the handler itself, not by its types: a handler someone installed after
    ours, for FastTextError too, is theirs."""
    ours = getattr(shell, "_fasttext_handler", None)
    return ours is not None and getattr(shell, "CustomTB", None) is ours


def stop_showing_errors_as_lines():
    """Undo :func:`show_errors_as_lines`: the kernel's handler is the one it had before (or none). A handler
    someone installed after ours is left alone."""
    shell = _kernel_shell()
    if shell is None or getattr(shell, "_fasttext_handler", None) is None:
        return
    chained = shell._fasttext_chained
    if _installed(shell):
        if chained is None:
            shell.set_custom_exc((), None)
        else:  # the handler as it was: its types and its bound method (not wrapped a second time)
            shell.custom_exceptions, shell.CustomTB = chained.previous_types, chained.previous_handler
    del shell._fasttext_chained, shell._fasttext_handler
    try:
        shell.events.unregister("pre_run_cell", _drop_sdk_traceback_display)
    except ValueError:  # (not registered)
        pass
