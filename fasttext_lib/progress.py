"""Progress bars that render as plain text everywhere (terminals, papermill, nbval, log files).

``tqdm.auto`` would draw a widget in notebooks, which executed notebooks cannot replay and nbval
cannot compare; the plain bar writes to stderr, which nbval is told to ignore (the repository's
top-level conftest.py). Only training and downloads use it: serving never imports tqdm.

A terminal and a notebook redraw the bar in place (``\\r``). A file or a pipe (``train ... 2> log``, a
job's log collector) cannot: every redraw was appended to one line of ``\\r``-joined fragments. There
the bar is written as whole lines, at most one each :data:`LOG_INTERVAL` seconds, and its last state.

A failure's ``error:`` line is the last thing on stderr, and in a log the only one of a run that fails before
anything ran long: a bar closed by an exception (or abandoned by one, its loop's generator closed later) leaves
no last state (a terminal's is cleared), and in a log a loop shorter than :data:`LOG_INTERVAL` writes no line
unless it is a record the log keeps (``log_final``: each epoch's last state). Before, a bad input file logged
``vocabulary: 0it [00:00, ?it/s]`` above its error line.
"""
import sys

from tqdm import tqdm

LOG_INTERVAL = 30.0  # seconds between a logged bar's lines (a terminal's redraws: 1 s)


def bar(iterable=None, total=None, desc=None, disable=False, unit="it", log_final=False, **kwargs):
    """``log_final``: in a log, write the loop's last state even when it ran shorter than :data:`LOG_INTERVAL`."""
    stream = sys.stderr
    redraws = _redraws_in_place(stream)
    return _Bar(iterable, total=total, desc=desc, disable=disable, unit=unit,
                file=stream if redraws else _LoggedLines(stream), mininterval=1.0 if redraws else LOG_INTERVAL,
                delay=0 if redraws else LOG_INTERVAL, dynamic_ncols=False, ncols=100, leave=True,
                log_final=log_final and not redraws, **kwargs)


class _Bar(tqdm):
    def __init__(self, *args, log_final=False, **kwargs):
        self._log_final = log_final
        # An exception handled where the bar starts is none of its loop's: a download started over in the handler
        # of the 416 that refused its resume had its finished bar cleared, as a failed one is.
        self._handled_before = sys.exc_info()[1]
        super().__init__(*args, **kwargs)

    def close(self):
        if not hasattr(self, "disable"):  # a stop landed in tqdm's __init__ before it set its state: nothing shown
            return  # (tqdm.__del__ calls close: its AttributeError followed the run's error: line as a traceback)
        if not self.disable and not getattr(self, "_closed", False):
            self._closed = True
            handled, before, self._handled_before = sys.exc_info()[1], self._handled_before, None
            if handled is not None and handled is not before:  # an error (or GeneratorExit) on its way: no last state
                self.leave = False
            elif self._log_final:
                self.delay = 0  # (tqdm writes nothing at close for a bar it has not shown yet)
        super().close()


def _redraws_in_place(stream):
    """A terminal, or a Jupyter kernel's stream (the notebook front end draws its ``\\r`` in place)."""
    if type(stream).__module__.startswith("ipykernel"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # (closed, or a stand-in without isatty)
        return False


class _LoggedLines:
    """The stream tqdm draws on for a log: each redraw (``\\r`` + the bar + padding) is a line of its own, the
    same state twice (tqdm redraws at its close) once."""

    def __init__(self, stream):
        self.stream, self.last = stream, None

    def write(self, text):
        line = text.lstrip("\r").rstrip()
        if line and line != self.last:
            self.last = line
            self.stream.write(line + "\n")
        return len(text)

    def flush(self):
        self.stream.flush()
