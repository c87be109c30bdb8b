"""Signals turned into a clean stop, and the one line a stop is shown as.

SIGTERM (spot interruptions, ``StopTrainingJob``, Kubernetes, schedulers), SIGHUP (the terminal closed,
the ssh session dropped; not under ``nohup``, which ignores it) and SIGXCPU (a CPU-time limit reached, ``ulimit -t``:
a batch system's) are handled like Ctrl-C: inside
:func:`stop_on_signals` they raise :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, so every ``finally`` and ``except BaseException`` on the way out runs: publishing takes back
what it staged, temporary directories go, the prefetch thread stops. Around that: :func:`stop_at_once_on_signals`
(a stop while a command starts: one line, at once; a SageMaker job's also to :func:`job_failure_file`),
:func:`kept_stops` (a notebook's Stop that Python dropped in a finalizer), :func:`stops_held` (a Ctrl-C held
until a few lines that must run whole have run) and :func:`later_stops_held` (every stop after the first held
while a cleanup that must run whole runs). :func:`stop_message` is the stop's line, with what a stopped write
left (:func:`note_what_a_stop_left`).

It imports only errors.py (the error type, its line), nothing heavy: the package arms
:func:`stop_at_once_on_signals` as it is imported to run a command, before numpy.
"""
import contextlib
import functools
import signal
import sys
import threading

from .errors import FastTextError, could_not_remove, error_line


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM, SIGHUP or SIGXCPU arrived; ``exit_status`` is the shell's 128 + signal number (130, 143, 129,
    152)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.exit_status = 128 + signum

    def __str__(self):
        if self.signum == getattr(signal, "SIGXCPU", None):
            return "CPU time limit reached (SIGXCPU, ulimit -t)"
        what = {signal.SIGINT: "interrupted", signal.SIGHUP: "hung up"}.get(self.signum, "terminated")
        return f"{what} ({self.name})"


# The signal each active stop_on_signals (or kept_stops) block has received (None: none yet), innermost last.
_received = []


@contextlib.contextmanager
def stop_on_signals():
    """SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (main thread only; elsewhere a no-op). One that is
    ignored (``nohup``'s SIGHUP, a background job's SIGINT) stays ignored. Without this a hangup killed the run on the
    spot: no error line, and a bundle's staging directory (800 MB with bigrams) left in TMPDIR for good. SIGXCPU, the
    soft ``ulimit -t`` reached, killed the run so too (exit 152, no line); the kernel sends it again every CPU second,
    and SIGKILL at the hard limit, so the cleanup has until then.

    While the stack unwinds a second SIGTERM or SIGHUP is ignored, so cleanup is not cut short; a second
    Ctrl-C still interrupts it (``kill -9`` leftovers are removed by the next publish anyway).

    Python runs a signal handler between any two bytecodes, also inside a ``__del__`` (MXNet's
    NDArrays free their handles there), and an exception raised in a ``__del__`` is dropped: Python
    hands it to ``sys.unraisablehook``, which would print "Exception ignored ... Traceback" above the
    error line, and the run would go on. So the signal is remembered: :func:`raise_if_interrupted`
    (the training and scoring loops call it every batch) and the end of this block raise it again;
    and while this block is active that hook takes a dropped :class:`Interrupted` silently.
    (Delivering the signal again from the hook does not help: Python would run the handler inside
    the hook, where its exception is dropped too.)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    import sys

    received = _Received()

    def handler(signum, frame):
        for other in stopping:
            if other != signal.SIGINT:
                signal.signal(other, signal.SIG_IGN)
        if signal.SIGINT in stopping:  # (an ignored one stays ignored through the cleanup too)
            signal.signal(signal.SIGINT, signal.default_int_handler)
        received.signum = signum
        raise Interrupted(signum)

    def arm():
        return {s: signal.signal(s, handler) for s in stopping}

    def dropped(unraisable):
        if received.signum is None or not (isinstance(unraisable.exc_value, Interrupted) or _half_made(unraisable)):
            previous_hook(unraisable)

    # A signal ignored when the process started stays ignored (POSIX's convention: a background job's SIGINT, a
    # SIGTERM its launcher ignored): handled here, a Ctrl-C meant for a script's foreground ended its `cmd &` training.
    stopping = [s for s in stopping_signals() if signal.getsignal(s) is not signal.SIG_IGN]
    previous, received.arm = arm(), arm
    previous_hook, sys.unraisablehook = sys.unraisablehook, dropped
    try:
        with _innermost(received):
            yield
    finally:
        # after a stop, an array it left half made may be collected only now (a traceback's frame held it), after
        # the error line: its failing __del__ is dropped there too
        sys.unraisablehook = previous_hook if received.signum is None else _quiet_about_half_made(previous_hook)
        for s, h in previous.items():
            if s == getattr(signal, "SIGXCPU", None) and received.signum == s:  # the kernel sends it again each CPU
                continue  # second: restored, the next one dumped core during the exit (ignored, it stays so, until
                # the hard limit's SIGKILL)
            signal.signal(s, h if h is not None else signal.SIG_DFL)


@contextlib.contextmanager
def _innermost(received):
    """The block of :func:`stop_on_signals` or :func:`kept_stops` whose stops ``received`` records, run as the
    innermost one (what raise_if_interrupted, note_progress and tell_a_late_stop read). One for both: each had this
    written out, and what a stop ending either carries must not drift apart. A stop dropped in a finalizer meanwhile
    is raised at the block's end; a stop ending it carries where training was (a kept_stops block's: note_progress;
    ``where`` stays None in the other) and the late note."""
    _received.append(received)
    try:
        yield
        raise_if_interrupted()
    except KeyboardInterrupt as exc:
        if received.where is not None and not isinstance(exc, Interrupted):
            exc.stopped_at = received.where  # (shown as one line in a notebook: stopped_line)
        received.tell_a_late_stop(exc)
        raise
    finally:
        _received.remove(received)


def _half_made(unraisable):
    """Is this a ``__del__`` that failed on an object a stop left half made? A signal handled inside MXNet's
    ``NDArray.__init__`` before it sets ``self.handle`` leaves an array whose ``__del__`` (MXNDArrayFree(self.handle))
    raises AttributeError when it is collected: "Exception ignored in: <function NDArrayBase.__del__>" and a
    traceback, under the error line. Only that: the object whose ``__del__`` ran lacks its own ``handle`` (Python's
    lookup names both); a finalizer's other error that names 'handle' (``None.handle``, a message) is genuine, shown."""
    exc = unraisable.exc_value  # (AttributeError's name and obj: Python 3.10 on; the SageMaker 3.8 image shows it all)
    obj = getattr(exc, "obj", None)
    if not (isinstance(exc, AttributeError) and getattr(exc, "name", None) == "handle" and obj is not None):
        return False
    return getattr(type(obj), "__del__", None) is unraisable.object


def _quiet_about_half_made(hook):
    def quiet(unraisable):
        if not _half_made(unraisable):
            hook(unraisable)
    return quiet


class _Received:
    """The signal a :func:`stop_on_signals` block received (``signum``, None: none yet), and ``arm()``, which sets
    its handlers again; or, for a :func:`kept_stops` block (``plain``), the KeyboardInterrupt a finalizer dropped."""

    def __init__(self, plain=False):
        self.signum, self.arm, self.plain = None, None, plain
        self.where = None  # a kept_stops block's (epoch, step), as train noted it (note_progress), or a caller's line
        self.told = False  # where is a caller's line (note_stop_line): train's epoch and step are not the call's
        self.done = None  # the caller's line for a Stop once its write is done (note_stop_line's, note_written)
        self.line = None  # the caller's line before that (note_stop_line's): note_written_undone's
        self.late_note = None  # what a stop not told on its way out is to carry (tell_a_late_stop)

    def tell_a_late_stop(self, exc):
        """``exc``, a stop ending the block, carries the late note (:func:`tell_a_late_stop`) unless it was told of a
        checkpoint or a bundle on its way out (the innermost knows best)."""
        if self.late_note is not None and not any(_noted(exc, name) for name in _TOLD_WHERE_THE_RUN_IS):
            self.late_note(exc)

    def stop(self):
        """The exception that stops the block again: Python's own KeyboardInterrupt where it was one (a notebook's
        Stop button), else :class:`Interrupted` of the signal."""
        return KeyboardInterrupt() if self.plain else Interrupted(self.signum)


@contextlib.contextmanager
def kept_stops():
    """Within this block, a KeyboardInterrupt that Python drops in a finalizer still stops it: for the library's
    long calls (train) made outside :func:`stop_on_signals`, as a notebook makes them.

    A kernel's Stop button (and Ctrl-C in a Python shell) raises KeyboardInterrupt in the main thread, between any
    two bytecodes, also inside a ``__del__`` (MXNet frees every NDArray there). Python drops an exception raised
    there (``sys.unraisablehook`` printed 'Exception ignored in: <function NDArrayBase.__del__ ...>' and a
    traceback) and the call went on to its end: training on several devices ignored one press in ~6. Here it is
    remembered instead, silently, and raised again by :func:`raise_if_interrupted` (each training step) or at the
    end of the block. No signal handler is touched, and the hook is put back after the block. Inside a
    :func:`stop_on_signals` block (the CLI, the SageMaker job), or in another thread: a no-op."""
    if threading.current_thread() is not threading.main_thread() or _received:
        yield
        return
    received = _Received(plain=True)

    def dropped(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            received.signum = signal.SIGINT
        else:
            previous_hook(unraisable)

    previous_hook, sys.unraisablehook = sys.unraisablehook, dropped
    try:
        with _innermost(received):
            yield
    finally:
        if sys.unraisablehook is dropped:  # (one set meanwhile by someone else is theirs to put back)
            sys.unraisablehook = previous_hook


# The holding handler of the active stops_held block (at most one: one within it is a no-op).
_holding = []


@contextlib.contextmanager
def stops_held():
    """A few lines that must run whole, such as recording a result and reporting it: a Ctrl-C (SIGINT) that
    arrives within the block is held until its end, then handled as it would have been (its handler called:
    :func:`stop_on_signals`' in the CLI, Python's own KeyboardInterrupt in a notebook), so the interrupt lands before
    the block or after it, never between its lines. A second one within the block is handled at once (a block that
    hangs can still be stopped). SIGINT only: it is the stop a caller carries on after (autotune trains the best
    trial so far), so what the block reports must be whole; SIGTERM / SIGHUP end the run, and a scheduler sends one
    SIGTERM then its SIGKILL, which a block stuck in a write to a full pipe must not outwait. Held only where it has a
    Python handler (a default or ignored one is left as it is); in another thread, or within another such block
    (which holds for both: the inner one held the second signal as the outer's first), a no-op."""
    if threading.current_thread() is not threading.main_thread() or _holding:
        yield
        return
    held, previous = [], {}

    def hold(signum, frame):
        held.append(signum)
        if len(held) > 1:  # a second one: as without this block
            signal.signal(signum, previous[signum])
            previous[signum](signum, frame)

    try:
        # In the try: a stop whose handler raises just as the holding handler is set still has it put back (left on
        # SIGINT it swallowed the process's next Ctrl-C).
        _holding.append(hold)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            previous[signal.SIGINT] = handler
            signal.signal(signal.SIGINT, hold)
        yield
    finally:
        _holding.clear()  # (this block's, if it got as far as setting it: the only one)
        for s, handler in previous.items():
            if signal.getsignal(s) is hold:  # (one a handler set meanwhile, e.g. SIGTERM ignored after a stop, stays)
                signal.signal(s, handler)
        if len(held) == 1:  # (more: the second one was handled as it came)
            previous[held[0]](held[0], None)  # (also over an exception the block raised, as it would have come)


@contextlib.contextmanager
def later_stops_held():
    """For a block whose cleanup must run whole, however often the user stops it (a set's old files put back:
    storage.atomic): within it a stop (a signal whose handler is Python's: Ctrl-C; SIGTERM, SIGHUP, SIGXCPU under
    :func:`stop_on_signals`) is handled as usual the first time, and raises; every later one is held, however many
    come, and so is every one once the block has called the function it yields (``hold()``: its cleanup of a failure
    that was no stop begins). At its end the handlers are put back, and the first stop held is handled as it would
    have been (its handler called), unless the block ends in a stop already (the run is stopping: one more says
    nothing new). Unlike :func:`stops_held` no second stop is let through: the cleanup must be short steps that cannot
    hang (local renames); SIGKILL still ends it. A Ctrl-C pressed again and again (the CLI lets each one after the
    first through, as Python's KeyboardInterrupt) ended the put-back, then the step that sets aside a file it could not
    put back, and the user's old file, kept aside, was deleted with the kept files. In another thread: a no-op.
    (A stop at its default disposition, which has no first time to be handled in: :class:`DefaultStopsHeld`.)"""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    held, restore = [], {}  # restore: the handler each signal this block took gets back at its end

    def hold(signum, frame):
        held.append(signum)

    def hold_every_stop():
        for s in restore:
            handler = signal.getsignal(s)
            if handler is first_stop:
                signal.signal(s, hold)
            elif callable(handler) and handler is not hold:  # one the first stop's handler set (SIGINT's own, in
                restore[s] = handler  # the CLI): held, and it is what the signal gets back
                signal.signal(s, hold)

    def first_stop(signum, frame):
        try:
            restore[signum](signum, frame)
        except BaseException:  # (after the handler ran: what it set, e.g. SIGTERM ignored, stays; the rest is held)
            hold_every_stop()
            raise

    stopping = False
    try:
        # In the try: a stop just as the handlers are set still has them put back.
        for s in [signal.SIGINT, signal.SIGTERM, *_optional_stops()]:  # (an ignored one: no Python handler, left)
            handler = signal.getsignal(s)
            if callable(handler):
                restore[s] = handler
                signal.signal(s, first_stop)
        yield hold_every_stop
    except KeyboardInterrupt:
        stopping = True
        raise
    finally:
        for s, handler in restore.items():
            if signal.getsignal(s) in (first_stop, hold):  # (one set meanwhile by someone else stays)
                signal.signal(s, handler)
        if held and not stopping and callable(signal.getsignal(held[0])):
            signal.getsignal(held[0])(held[0], None)  # (also over an exception the block raised, as it would have come)


class DefaultStopsHeld:
    """A stopping signal at its default disposition (SIGTERM, SIGHUP, SIGXCPU, or SIGINT set so, in a program of the
    user's own that set no handler: no CLI) has no first time to be handled in: it ends the process wherever it lands,
    and it landed between a pair's renames or amid their put-back (the new train split beside the old test split).
    :meth:`hold` holds such signals (main thread only: elsewhere a no-op; an ignored one or one with a handler is left
    as it is) and :meth:`end` puts the default back and raises the first one held again, ending the process as it would
    have (its status, no line), the work between them done. Held only while the set is mixed, which is short local
    steps: :meth:`let_through` once it is whole again, so that a ``kill`` lands at once where the code may wait (the
    caller's ``on_written``, a copy of a large old file kept where there are no hard links); held through those, the
    process could not be ended but by SIGKILL until they went on."""

    def __init__(self):
        self._killing, self._held = [], []

        def hold(signum, frame):
            self._held.append(signum)

        self._handler = hold

    def hold(self):
        if self._killing or threading.current_thread() is not threading.main_thread():
            return
        for s in [signal.SIGINT, signal.SIGTERM, *_optional_stops()]:
            if signal.getsignal(s) is signal.SIG_DFL:  # (SIGINT's is Python's own handler, unless the program set this)
                self._killing.append(s)
                signal.signal(s, self._handler)

    def let_through(self):
        """The defaults back, unless one came while held: that one is raised at :meth:`end`, once the block's own
        cleanup is done (its kept old files, named as temporaries, removed)."""
        if not self._held:
            self.end()

    def end(self):
        killing, self._killing = self._killing, []
        for s in killing:
            if signal.getsignal(s) is self._handler:  # (one set meanwhile by someone else stays)
                signal.signal(s, signal.SIG_DFL)
        killed = [s for s in self._held if s in killing and signal.getsignal(s) is signal.SIG_DFL]
        self._held.clear()
        if killed:
            signal.raise_signal(killed[0])  # (the process ends here, as the signal would have ended it)


def note_progress(epoch, step):
    """Where the innermost :func:`kept_stops` block's training is (``None``: nowhere a Stop can be told of): a
    Stop pressed there carries it as ``stopped_at`` (:func:`stopped_line`). Outside such a block, or in one whose
    caller tells its own line (:func:`note_stop_line`: an autotune trial's epoch is not the call's): nothing."""
    if _received and _received[-1].plain and not _received[-1].told:
        _received[-1].where = None if epoch is None else (epoch, step)


def note_stop_line(line, done=None):
    """The line (``stopped by the user ...``) a Stop pressed from here on in the innermost :func:`kept_stops` block is
    shown as (:func:`stopped_line`), for a call that trains several times: autotune's trials and final model. The
    trainings' own epoch and step (:func:`note_progress`) are no longer told: a trial's epoch 2, step 10 was shown as
    if it were the call's. ``done``: the line from the moment the call's write is done (:func:`note_written`).
    Outside such a block (the CLI's :func:`stop_on_signals`): nothing."""
    if _received and _received[-1].plain:
        _received[-1].where, _received[-1].told, _received[-1].done, _received[-1].line = line, True, done, line


def note_written():
    """The write of the innermost :func:`telling_stops` call is done (a bundle's config.json in place, a file and its
    record): a Stop from here on is said as its ``done`` line, not as one that left the earlier files as they were.
    Told only once the call returned, a Stop as its staging folder went, or as it said what it replaced, said that
    nothing was written. Elsewhere (the CLI, a call with no such line): nothing. Returns whether it was noted (else a
    caller says what was written its own way: :func:`note_what_a_stop_came_after`)."""
    if _received and _received[-1].plain and _received[-1].done is not None:
        _received[-1].where = _received[-1].done
        return True
    return False


def note_written_undone():
    """The write :func:`note_written` said done was undone after all: a stop that came just after that note, before
    the write's last step, had its files put back (storage.atomic, a set of local files: 04's word vectors and their
    record, noted done as they were in place). Its Stop is said as the call's line again (the earlier files as they
    were), where its ``done`` line said the new ones were written. Elsewhere, or not noted done: nothing."""
    received = _received[-1] if _received else None
    if received is not None and received.plain and received.done is not None and received.where == received.done:
        received.where = received.line


def tell_a_late_stop(note):
    """``note(exc)``: what a stop ``exc`` that ends the innermost :func:`stop_on_signals` or :func:`kept_stops` block
    from here on is to carry, unless it was told of a checkpoint or a bundle on its way out
    (checkpoints.KeptCheckpoint.told_on_a_stop registers its own). A stop Python dropped in a finalizer (where MXNet
    frees its arrays) is raised again only at the block's end, past the blocks that tell it, and a stop can come
    after they ended (a cluster worker's last line): either said "stopped and cleaned up", or a notebook's "nothing
    was saved", with the checkpoint kept or the bundle written. The latest note stays; outside such a block, or in
    another thread: nothing."""
    if threading.current_thread() is threading.main_thread() and _received:
        _received[-1].late_note = note


def stopped_line(exc):
    """The one line a notebook shows for a Stop that :func:`kept_stops` told the place of: the epoch and step of a
    training from scratch (nothing of it is kept, and the same cell run again trains the same model), or the line a
    caller gave (:func:`note_stop_line`); else None."""
    where = getattr(exc, "stopped_at", None) if isinstance(exc, KeyboardInterrupt) else None
    if not where:
        return None
    if isinstance(where, str):
        return where
    epoch, step = where
    return f"stopped by the user at epoch {epoch}, step {step}; nothing was saved; run the cell again to start over"


def keeping_stops(function):
    """``function`` run in a :func:`kept_stops` block."""
    @functools.wraps(function)
    def kept(*args, **kwargs):
        with kept_stops():
            return function(*args, **kwargs)
    return kept


def telling_stops(line, done=None):
    """A decorator: the function, a library call a notebook makes that may take minutes (a dataset read or written, a
    bundle loaded: at Yelp size), run in a :func:`kept_stops` block whose Stop is said as ``line(*args, **kwargs)``
    (:func:`note_stop_line`; ``stopped by the user while reading s3://...; run the cell again to read it``), one line
    in a notebook (notebook_errors) where it was IPython's 14-line KeyboardInterrupt traceback through the reader. A
    stop that left something (:func:`stop_left`) is said as the CLI says it, as in any such block. Called within
    another block (the CLI's :func:`stop_on_signals`, a training's, an outer call of this kind's), or in another
    thread: the function alone; that block's line is the one to say.

    ``done(*args, **kwargs)``: a write's line of a Stop that comes once its files are written: from the moment the
    function says so (:func:`note_written`: its last steps, a staging folder removed, may take a while), or once it
    has returned (a Stop a finalizer dropped while it wrote, raised again only at the block's end), where ``line``
    said that none was."""
    def decorate(function):
        @functools.wraps(function)
        def told(*args, **kwargs):
            if _received or threading.current_thread() is not threading.main_thread():
                return function(*args, **kwargs)
            try:
                said, done_said = line(*args, **kwargs), done and done(*args, **kwargs)
            except (TypeError, FastTextError):  # (wrong arguments, or a value the line cannot name: the function's
                return function(*args, **kwargs)  # own error names them, not the line's)
            with kept_stops():
                note_stop_line(said, done_said)
                result = function(*args, **kwargs)
                note_written()
                return result
        return told
    return decorate


def stopped_reading(what):
    """The line of a Stop during a read of ``what`` (:func:`telling_stops`): a read changes nothing of the user's."""
    return f"stopped by the user while reading {what}; run the cell again to read it"


def note_what_a_stop_left(exc, what):
    """A KeyboardInterrupt (Ctrl-C, SIGTERM: :class:`Interrupted`) ``exc`` that stopped a write where its cleanup
    cannot put back what was there (files written together, some already replaced): ``what`` it left, said at the
    end of the stop's line (``...; stopped and cleaned up, but <what>``: :func:`stop_message`). Noted of a failure
    (a FastTextError whose message says it too), the line of a stop that comes during its cleanup says it as well.
    Each note is kept, in order (said once): two cleanups can each leave something on the same stop (a staging object
    S3 may still create, a file kept aside), and a second note that replaced the first hid what the first had left."""
    _add_note(exc, "left_behind", what)


def note_what_a_stop_kept(exc, what):
    """A KeyboardInterrupt ``exc`` whose command keeps ``what`` on purpose, for a rerun (prepare's archive in the
    download cache, a partial download it resumes): said at the end of the stop's line, after what it cleaned up or
    had written (``...; <what>``: :func:`stop_message`). Said as what a write left (``..., but <what>``), it read as
    a loss after "stopped after <files> were written whole", where nothing was lost. Each note is kept, in order."""
    _add_note(exc, "kept_for_a_rerun", what)


def _add_note(exc, name, what):
    """``what`` added to the notes ``name`` of ``exc`` (said once, in the order noted)."""
    told = getattr(exc, name, None) or []
    told = told if isinstance(told, list) else [told]
    setattr(exc, name, told if what in told else [*told, what])


def note_what_a_stop_could_not_remove(exc, left, rerun):
    """A KeyboardInterrupt ``exc`` whose cleanup could not remove files the stopped write had created (S3 refused the
    DELETE: a role without s3:DeleteObject): ``left``, each ``(file, why)``. The stop's line names them instead of
    saying it cleaned up (:func:`stop_message`), and ``rerun``: how the write's user replaces them, in their terms
    (errors.could_not_remove)."""
    exc.not_removed = [*getattr(exc, "not_removed", ()), *left]
    exc.rerun_to_replace = getattr(exc, "rerun_to_replace", None) or rerun


def note_what_a_stop_came_after(exc, what):
    """A KeyboardInterrupt ``exc`` that stopped a write once it had done ``what`` (``<files> were written whole``: a
    set on S3, stopped during the check that follows its writes, or its summary line; :func:`files_written`: files a
    command writes each on its own): its line says ``stopped after <what>`` (:func:`stop_message`). "stopped and
    cleaned up" had the user think the old files (or none) were there. The first note stays: the innermost knows best
    (autotune's bundle and its trial table, not the CLI's bundle alone)."""
    if getattr(exc, "came_after", None) is None:
        exc.came_after = what


def files_written(files):
    """What a stop came after (:func:`note_what_a_stop_came_after`) once a command had written ``files``, ``(what,
    where)`` each, each on its own: ``the bundle was written to B, history.csv to D and metrics.json to D``."""
    said = [f"{what} to {where}" for what, where in files]
    said[0] = f"{files[0][0]} was written to {files[0][1]}"
    return _and_joined(said)


def _and_joined(items):
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def note_what_a_stop_cleaned_up(exc, path):
    """A KeyboardInterrupt ``exc`` that came while ``path`` was being written, one of the files a command writes one
    after the other (a training job's metrics after its bundle), whose write it cleaned up: after what the earlier
    writes did (:func:`note_what_a_stop_came_after`) its line names it (:func:`stop_message`). Said only as "stopped
    after the bundle was written to ...", the files written since and the one cleaned up went unsaid. ``path`` may be
    several files written together, a set (prepare's dataset files: a list or tuple of them), and the stop may come
    after no earlier write: its line then says ``stopped and cleaned up <files>, being written when the stop came``
    ("stopped and cleaned up" alone did not say what, beside the archive prepare keeps). The first note stays."""
    if getattr(exc, "cleaned_up", None) is None:
        exc.cleaned_up = path if isinstance(path, str) else tuple(path)  # (a tuple: _noted takes a list as notes)


def note_checkpoint_kept(exc, where, epoch, checkpoint_dir, compared=True):
    """A KeyboardInterrupt ``exc`` that ended a training whose ``checkpoint_dir`` keeps a checkpoint a rerun resumes
    from: ``where`` it is (its epoch's folder) and its ``epoch``, said in the stop's line with how to resume
    (:func:`stop_message`). "stopped and cleaned up" alone had the user think the checkpoints were removed too, and
    not know that the same command goes on from there. The first note stays: the innermost knows best (a save
    stopped once its checkpoint was in place keeps that one, not the epoch before). ``compared``: whether the run
    has compared it with its data (resumed it, or saved it); one found before the data was read may be another run's,
    which a rerun refuses: the line then says it was not compared, and resumes only if it is this data's."""
    if getattr(exc, "checkpoint_kept", None) is None:
        exc.checkpoint_kept = (where, epoch, checkpoint_dir, compared)


def note_checkpoint_being_written(exc, where, epoch, checkpoint_dir, manifest):
    """A KeyboardInterrupt ``exc`` that came while the PUT of ``epoch``'s ``manifest`` (checkpoint.json, at ``where``,
    in ``checkpoint_dir`` on S3) waited for S3's answer: S3 may apply it after the stop, and a rerun then resumes from
    ``epoch``, else from the checkpoint before it (:func:`note_checkpoint_kept`'s, or none). The stop's line says both:
    it named the one before as kept, a definite epoch nobody can know. The first note stays."""
    if getattr(exc, "checkpoint_being_written", None) is None:
        exc.checkpoint_being_written = (where, epoch, checkpoint_dir, manifest)


def note_checkpoints_kept_by_the_first_host(exc, checkpoint_dir):
    """A KeyboardInterrupt ``exc`` that ended a worker of a ``dist_*`` cluster other than the first (rank 0), which
    alone writes the run's checkpoints, in ``checkpoint_dir`` (its own): the stop's line says so, and how to resume.
    "stopped and cleaned up" alone had the user of that host think the run kept nothing."""
    exc.checkpoints_kept_by_the_first_host = checkpoint_dir


# The notes that tell where a stopped run is (a checkpoint kept, a bundle written): a late note adds none to them
_TOLD_WHERE_THE_RUN_IS = ("checkpoint_kept", "checkpoint_being_written", "checkpoints_kept_by_the_first_host",
                          "came_after")


# How the CLI's user resumes from a kept checkpoint: what a stop's line says after the checkpoint's place.
RESUME_BY_RERUN = ": run the same command again to resume from it"
# What a checkpoint not yet compared with the data (found before the data was read) adds to how to resume from it:
# it may be another run's (same settings, other data), which the rerun refuses
NOT_COMPARED_CONDITION = " if it was written from the same data"
NOT_COMPARED = " (not yet compared with the data)"  # (said after such a checkpoint's epoch)


def stop_left(exc):
    """Whether :func:`note_what_a_stop_left`, :func:`note_what_a_stop_kept`, :func:`note_what_a_stop_could_not_remove`,
    :func:`note_what_a_stop_came_after` or :func:`note_checkpoint_kept` told of the stop ``exc`` (or of a failure or
    stop it came during: see :func:`_noted`): its line (:func:`stop_message`) says what it left."""
    return bool(_noted(exc, "left_behind") or _noted(exc, "not_removed") or _noted(exc, "kept_for_a_rerun")
                or any(_noted(exc, name) for name in _TOLD_WHERE_THE_RUN_IS))


def _noted(exc, name):
    """What the ``note_what_a_stop_*`` functions noted as ``name`` of ``exc`` and of the exceptions it was raised while
    handling (its ``__context__``, and theirs), latest first, each once. A stop that comes while an earlier one (or a
    failure) is being cleaned up after replaces it on the way out: its line dropped what the first had left (a user's
    file set aside, named only there), and said "cleaned up"."""
    found, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        value = getattr(exc, name, None)
        for item in (value if isinstance(value, list) else [value] if value else []):
            if item not in found:
                found.append(item)
        exc = exc.__context__
    return found


def stop_message(exc, resume=RESUME_BY_RERUN):
    """The one line (after ``error: ``) a stop ``exc`` is shown as, by the CLI (cli.main) and in a notebook
    (notebook_errors): what stopped it, that it stopped and cleaned up, or the files its cleanup could not remove, or
    what it had done when it stopped (:func:`note_what_a_stop_came_after`; then the file whose write it cleaned up:
    :func:`note_what_a_stop_cleaned_up`), what it left that no cleanup can put back (:func:`stop_left`), and what it
    keeps for a rerun (:func:`note_what_a_stop_kept`). A
    notebook's Stop that left nothing and whose place was told (a training's epoch and step, an autotune search's:
    :func:`stopped_line`): that line.
    A training whose checkpoint directory keeps a checkpoint (:func:`note_checkpoint_kept`): that checkpoint's epoch
    and place, then ``resume``: how to resume from it, as the caller's user does (the CLI's :data:`RESUME_BY_RERUN`;
    a function of the checkpoint directory: the training job's, which depends on where it is); both epochs where the
    newer one's checkpoint.json was being written to S3 (:func:`note_checkpoint_being_written`); a cluster's other
    workers: that the first one keeps them, and where (:func:`note_checkpoints_kept_by_the_first_host`)."""
    left, not_removed = "; ".join(_noted(exc, "left_behind")) or None, _noted(exc, "not_removed")
    came_after = next(iter(_noted(exc, "came_after")), None)
    if not stop_left(exc) and stopped_line(exc):
        return stopped_line(exc)
    line = f"{str(exc) or 'interrupted (SIGINT)'}; stopped"  # (a notebook's Stop, a second Ctrl-C: no text)
    cleaned_up = next(iter(_noted(exc, "cleaned_up")), None)
    if not_removed:
        line += f"; {could_not_remove(not_removed, _noted(exc, 'rerun_to_replace')[0])}"
    elif came_after and cleaned_up:  # (files written one after the other: those done, and the one the stop cut short)
        line += (f" after {came_after} (kept); {_cleaned_up_said(cleaned_up)}, being written when the stop came, "
                 f"{'was' if isinstance(cleaned_up, str) or len(cleaned_up) == 1 else 'were'} cleaned up")
    elif came_after:
        line += f" after {came_after}"
    else:
        line += " and cleaned up" + (f" {_cleaned_up_said(cleaned_up)}, being written when the stop came"
                                     if cleaned_up else "")
    line += f", but {left}" if left else ""
    line += "".join(f"; {kept}" for kept in _noted(exc, "kept_for_a_rerun"))
    return line + _checkpoint_clause(exc, ", keeping" if line.endswith(" and cleaned up") else "; keeping", resume)


def _cleaned_up_said(cleaned_up):
    """The file or files :func:`note_what_a_stop_cleaned_up` noted, as a stop's line names them."""
    return cleaned_up if isinstance(cleaned_up, str) else _and_joined(list(cleaned_up))


def _checkpoint_clause(exc, joined, resume):
    """:func:`stop_message`'s end: the checkpoint a rerun resumes from, and how (``resume``), or ``""``. ``joined``:
    what comes before ``keeping``."""
    kept = next(iter(_noted(exc, "checkpoint_kept")), None)
    written = next(iter(_noted(exc, "checkpoint_being_written")), None)
    first_hosts = next(iter(_noted(exc, "checkpoints_kept_by_the_first_host")), None)
    if written:
        where, epoch, checkpoint_dir, manifest = written
        if kept and kept[1] < epoch:
            return (f"{joined} the checkpoint of epoch {older_or_newer(kept, epoch)} in {checkpoint_dir} (epoch "
                    f"{epoch}'s {manifest} was being written when the stop came: S3 may still apply it)"
                    + _resumed(resume, checkpoint_dir, "the newer") + older_condition(kept))
        return (f"{joined} the checkpoint of epoch {epoch} in {where} if S3 applies its {manifest} (being written when "
                f"the stop came)" + _resumed(resume, checkpoint_dir))
    if kept:
        where, epoch, checkpoint_dir, compared = kept
        return (f"{joined} the checkpoint of epoch {epoch} in {where}" + ("" if compared else NOT_COMPARED)
                + _resumed(resume, checkpoint_dir) + ("" if compared else NOT_COMPARED_CONDITION))
    if first_hosts:
        return (f"; the checkpoints are kept by the first host (worker 0) in {first_hosts}"
                + _resumed(resume, first_hosts, "the newest"))
    return ""


def older_or_newer(kept, epoch):
    """``kept``'s epoch (:func:`note_checkpoint_kept`'s note) or ``epoch``, whose checkpoint.json was being written: the
    one a rerun resumes from, as S3 applies that PUT or not; the older said not yet compared where it was not."""
    return f"{kept[1]}{'' if kept[3] else NOT_COMPARED} or {epoch}"


def older_condition(kept):
    """What resuming from the newer of :func:`older_or_newer` adds where the older (``kept``) was not yet compared with
    the data: a rerun that finds only it resumes from it on :data:`NOT_COMPARED_CONDITION` alone (else it refuses it,
    as another run's), which the line of that checkpoint alone says, and this one dropped."""
    return "" if kept[3] else f" (from epoch {kept[1]} only{NOT_COMPARED_CONDITION})"


def _resumed(resume, checkpoint_dir, which=None):
    """How to resume (``resume``: a line's end, or a function of ``checkpoint_dir`` that gives it) from the checkpoint
    named, or from ``which`` of those named: each caller's way ends ``... from it``."""
    said = resume(checkpoint_dir) if callable(resume) else resume
    return said[:-len("it")] + which if which and said.endswith(" from it") else said


def carry_on_after_ctrl_c(exc):
    """For a caller that handles a first Ctrl-C and goes on (autotune stops its search and trains the best setting
    found): whether the KeyboardInterrupt ``exc`` is one. If so, it is taken as handled: the signal is forgotten
    (:func:`raise_if_interrupted` would raise it again) and the handlers of the innermost :func:`stop_on_signals`
    block are set again, so that the next SIGINT, SIGTERM or SIGHUP stops the run as the first one would have (after
    a signal a SIGTERM is ignored, to let the cleanup finish). Not one: a SIGTERM or SIGHUP (:class:`Interrupted`),
    and, within such a block, Python's own KeyboardInterrupt, which only a second Ctrl-C raises there. Outside any
    block (a notebook's interrupt button) every KeyboardInterrupt but those is a first Ctrl-C, and there is nothing
    to reset."""
    if isinstance(exc, Interrupted) and exc.signum != signal.SIGINT:
        return False
    if threading.current_thread() is not threading.main_thread() or not _received:
        return True
    received = _received[-1]
    if received.plain:  # a kept_stops block (a notebook's train): every KeyboardInterrupt is a first press
        received.signum = None
        if not received.told:  # (a later Stop elsewhere is not told this one's step; a caller's line it tells anew)
            received.where = None
        return True
    if not isinstance(exc, Interrupted):
        return False
    received.signum = None
    received.arm()
    return True


def stopping_signals():
    """The signals that stop a command (:func:`stop_on_signals`; cli's handler while a command starts): SIGINT, SIGTERM,
    and SIGHUP and SIGXCPU where the platform has them and they are not ignored."""
    return [signal.SIGINT, signal.SIGTERM] + [s for s in _optional_stops() if signal.getsignal(s) != signal.SIG_IGN]


# The handlers stop_at_once_on_signals replaced, while its own are in place (None: never armed).
_before_stop_at_once = None
# The file stop_at_once_on_signals' handler also writes its line to (None: none): a SageMaker job's failure file.
_stop_at_once_failure_file = None
# The exit status of the command that has done its work (or failed) and said so (None: not yet): command_finished.
_finished_status = None


def command_finished(status):
    """The command has done its work (or failed) and said so, in its last line, and ends with ``status``: from here
    on, once :func:`stop_on_signals` has put :func:`stop_at_once_on_signals`' handler back, a stop ends the process
    with ``status`` at once, without a line. That handler's "interrupted (SIGINT)" and 130 came after the lines that
    said the bundle and its trial table were written (as the command returned), or as a second error line after one
    that said why the command failed (while MXNet finished what was queued: errors.let_mxnet_finish)."""
    global _finished_status
    _finished_status = status


def stop_at_once_on_signals(failure_file=None):
    """Ctrl-C, SIGTERM, SIGHUP or SIGXCPU (:func:`stopping_signals`) while a command starts, before anything is
    written and before :func:`stop_on_signals` is armed: one ``error:`` line and the signal's exit status (130, 143,
    129, 152), at once (``os._exit``). A signal ignored when the process started (``nohup``, a background job's SIGINT)
    stays ignored. Returns the handlers it replaced, to be put back once the command has its own; armed again (the
    package armed it as it was imported to run the command, then cli.run), the ones it replaced the first time.

    ``failure_file``: the line goes there too, unless that file exists already (a SageMaker training job's
    :func:`job_failure_file`, its FailureReason; one written before is the job's first explanation, and stays). One
    there when it is first armed with that file is an earlier job's (a local rerun in the same output folder):
    removed now, so that a stop while this job starts is said as its own reason, not as that job's."""
    global _before_stop_at_once, _stop_at_once_failure_file
    if failure_file and failure_file != _stop_at_once_failure_file:
        import os

        with contextlib.suppress(OSError):  # (missing: nothing to do; not removable: sm_train.clear_failure says so)
            os.remove(failure_file)
    _stop_at_once_failure_file = failure_file
    command_finished(None)  # (a command starts)
    if _before_stop_at_once and all(signal.getsignal(s) is _stop_at_once for s in _before_stop_at_once):
        return dict(_before_stop_at_once)
    _before_stop_at_once = {s: signal.signal(s, _stop_at_once) for s in stopping_signals()
                            if signal.getsignal(s) is not signal.SIG_IGN}
    return dict(_before_stop_at_once)


def _stop_at_once(signum, frame):
    import os

    if _finished_status is not None:  # (the command has said its last line: command_finished)
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(_finished_status)
    stop = Interrupted(signum)
    line = error_line(stop)
    with contextlib.suppress(Exception):  # (stderr gone: the status alone)
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    if _stop_at_once_failure_file:
        # os alone: the handler may run in the middle of any import, whose module is half made
        with contextlib.suppress(OSError):
            descriptor = os.open(_stop_at_once_failure_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(descriptor, failure_reason(line).encode("utf-8"))
            finally:
                os.close(descriptor)
    os._exit(stop.exit_status)


SAGEMAKER_OUTPUT_DIR = "/opt/ml/output"  # SM_OUTPUT_DIR's value in a SageMaker training container
FAILURE_REASON_CHARS = 1024  # what DescribeTrainingJob shows of the failure file
_CUT = " … "


def failure_reason(line):
    """``line`` as it fits :data:`FAILURE_REASON_CHARS`: whole, or its start and its end with the middle left out at
    word boundaries and marked (`` … ``). Cut at the limit, a long line (a file's many JSON keys named) lost its end,
    where the way out is said, mid-word with no sign of it."""
    if len(line) <= FAILURE_REASON_CHARS:
        return line
    room = FAILURE_REASON_CHARS - len(_CUT)
    head, tail = line[:room * 2 // 3], line[len(line) - (room - room * 2 // 3):]
    if " " in head[1:]:
        head = head[:head.rindex(" ")]  # (the word the cut went through, left out)
    if " " in tail[:-1]:
        tail = tail[tail.index(" ") + 1:]
    return head + _CUT + tail


def job_failure_file(environ=None):
    """``$SM_OUTPUT_DIR/failure`` (``/opt/ml/output/failure`` where it is unset): the file whose text a SageMaker
    training job shows as its FailureReason (sm_train.write_failure). ``None`` where that directory does not exist
    (outside a container). Here, not in sm_train, because it is needed before anything heavy is imported: a signal at
    the job's start writes it (:func:`stop_at_once_on_signals`)."""
    import os

    env = os.environ if environ is None else environ
    output_dir = env.get("SM_OUTPUT_DIR") or SAGEMAKER_OUTPUT_DIR
    return os.path.join(output_dir, "failure") if os.path.isdir(output_dir) else None


def _optional_stops():
    """The stopping signals the platform may lack (Windows): SIGHUP, SIGXCPU. Either stops the run cleanly unless it
    is ignored (``nohup``; a parent's SIG_IGN for SIGXCPU is inherited as well)."""
    return [getattr(signal, name) for name in ("SIGHUP", "SIGXCPU") if hasattr(signal, name)]


def raise_if_interrupted():
    """Raise :class:`Interrupted` again if a signal arrived whose first raise was dropped (see :func:`stop_on_signals`;
    within :func:`kept_stops`, the KeyboardInterrupt dropped); a no-op otherwise (one list lookup: cheap enough for
    every step)."""
    for received in _received:
        if received.signum is not None:
            raise received.stop()
