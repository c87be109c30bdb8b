"""A ``dist_*`` kvstore's cluster, kept from training wrong or waiting for ever.

MXNet's parameter server (ps-lite, MXNet 1.9.1) has no failure handling of its own. A worker killed
mid-epoch (the OOM killer, a lost spot host, a SIGTERM on one host) left every other worker waiting for its
pushes for ever, and the failed worker itself too, in the kvstore's exit barrier after its error line (a
SageMaker job billed until its max runtime). ps-lite's heartbeats (``PS_HEARTBEAT_INTERVAL`` /
``PS_HEARTBEAT_TIMEOUT``) end nothing: the scheduler only uses them to re-admit a restarted node
(``Van::ProcessAddNodeCommandAtScheduler``), and a worker hears only from the scheduler, never from the other
workers or the servers. A worker that failed before joining (unreadable data) or a scheduler that cannot be
reached left the others in ``mx.kv.create`` for ever. And workers given other data or settings (a channel with
``ShardedByS3Key``, another file on one host, another ``--seed``) trained together without a word, each with its own
vocabulary, into a model of nothing (or, with other step counts, waited for ever at the end).

So every worker:

* refuses, before it reads its data, an environment no cluster launched it in (the ``DMLC_*`` variables unset),
  a scheduler address that cannot be one or a bad ``FASTTEXT_CLUSTER_TIMEOUT`` (:func:`check_kvstore_environment`);
* compares, before the first step, its data, settings and resumed checkpoint with every other worker's
  (:func:`agree`): one line names the worker, its host and what differs;
* answers on a TCP port of its own while it lives (:class:`Watch`), which it tells the others as it joins
  (:func:`introduce`);
* while it waits on the cluster (joining it, stepping, leaving it) watches for progress: after
  :data:`PROBE_AFTER` seconds without a step it asks the other workers whether they live, and one that does
  not answer (its process is gone, or its host) ends the run in one ``error:`` line naming it, and while it joins,
  a scheduler's port that answers as no ZeroMQ socket does (another program holds it) ends it too; after
  ``FASTTEXT_CLUSTER_TIMEOUT`` seconds (default :data:`DEFAULT_TIMEOUT`) without a step it ends the run
  whatever the cause (a server or the scheduler lost, a worker that never joined);
* on an error of its own exits at once after its error line (:func:`exit_if_joined`), rather than wait in the
  kvstore's exit barrier for workers that wait for it;
* on an error before it joined (every worker reads its data first: a file missing or empty on its host alone; a
  usage error in its host's own command line; a bug; a stop), joins to tell the others its line
  (:func:`tell_the_others`; where MXNet cannot start in it, from a child process it can start in), and they end in
  one line naming it and its reason (or that it was stopped), rather than wait ``FASTTEXT_CLUSTER_TIMEOUT`` for it:
  the CLI and the training job after their own line and cleanup, the Python API's ``train()`` itself
  (:func:`told_if_it_fails`); a stop that lands while it joins is held until the others are told
  (:func:`stops_told_as_it_joins`).

The scheduler and servers are MXNet's own processes (SageMaker's MXNet toolkit starts them): they stay in their
barrier until stopped, which the end of a SageMaker job's container does.
"""
import contextlib
import hashlib
import json
import os
import socket
import sys
import threading
import time

from .errors import FastTextError, bug_reason, error_line, setting_named
from .process_limits import missing_cluster_variables

TIMEOUT_ENV = "FASTTEXT_CLUSTER_TIMEOUT"
# Seconds a worker waits on the cluster with no step done before it gives up. Its peers' work between steps
# (worker 0 scores the validation split and writes a checkpoint; every worker reads its data before joining)
# must fit: a lost worker is found much sooner, by PROBE_AFTER.
DEFAULT_TIMEOUT = 1800
PROBE_AFTER = 10  # seconds without a step before the other workers are asked whether they live
# Seconds a stopped worker waits to tell the others (tell_the_others; a stop held while it joins:
# stops_told_as_it_joins): then it exits all the same. Tests shorten it (a sitecustomize sets it in the workers).
STOPPED_TELLS_FOR = 60
# Seconds a failed worker waits for the others to join, to tell them its error (tell_the_others): they may still be
# reading their data (minutes at Yelp size), but an instance that has failed must not wait FASTTEXT_CLUSTER_TIMEOUT
# (30 min, billed) for others that may be gone. Past it they end on their own timeout, as before the telling.
FAILED_TELLS_FOR = 600
PROBE_TIMEOUT = 5  # seconds a connect to a live worker's port may take (a host gone answers nothing)
JOINING = "while joining the cluster"  # the phase in which the scheduler's port is checked (scheduler_port_taken)
# What a ZeroMQ socket, as ps-lite's scheduler listens with, sends first on every connection (ZMTP's signature)
ZMTP_SIGNATURE_START, ZMTP_SIGNATURE_END, ZMTP_SIGNATURE_BYTES = 0xFF, 0x7F, 10
AGREE_KEY = 1000  # kvstore keys AGREE_KEY + rank: each worker's description (optim.py uses 0 and 1)
INTRODUCE_KEY = 2000  # kvstore keys INTRODUCE_KEY + rank: each worker's address, or its failure, as it joins
AGREE_BYTES = 4096  # a description's JSON, padded: a float32 per byte, exact
# What may differ between workers: the devices, the bars, and the vectors' path (their content is in the data's id)
LOCAL_SETTINGS = ("ctx", "progress", "pretrained_vectors")

REPORTERS = []  # callables given the error line a lost cluster ends in (sm_train: the job's failure file)
_joined = []  # the Watch of this process's cluster, once it started joining one
_ever_joined = []  # every Watch made: MXNet joins a cluster once per process (tell_the_others joins none after one)


def joined():
    return bool(_joined)


def exit_if_joined(status):
    """A worker of a cluster ends here after its error line, at once: the kvstore's destructor would wait in a
    barrier for the other workers, which wait for this one's pushes (neither would ever end)."""
    if _joined:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def timeout_from_environment(environ=None):
    text = (os.environ if environ is None else environ).get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not value > 0:
        raise FastTextError(f"{TIMEOUT_ENV} must be a number of seconds above 0, got {text!r}")
    return value


def check_kvstore_environment(kvstore):
    """Refuse a ``dist_*`` kvstore in a process no cluster launched: MXNet stopped it with a C++ CHECK failure and
    its traceback (``Environment::Get()->find("DMLC_NUM_WORKER")``) once the data had been read. The line names the
    setting as the caller's user sets it (errors.setting_named): ``--kvstore dist_sync``, ``kvstore='dist_sync'``.
    Then, where this process joins a cluster, that it has room for the join (mxnet_env.check_room_to_join)."""
    from .mxnet_env import check_room_to_join

    _check_cluster_settings(kvstore)
    check_room_to_join(kvstore)


def _check_cluster_settings(kvstore):
    """:func:`check_kvstore_environment`'s checks of the cluster's variables (not of this process's room to join:
    :func:`tell_the_others` joins from a child where this one has none)."""
    kvstore = str(kvstore)
    missing = missing_cluster_variables() if kvstore.startswith("dist") else []
    if missing:
        raise FastTextError(f"{setting_named('kvstore', kvstore)} trains in an MXNet parameter-server cluster, and this "
                            f"process is in none ({', '.join(missing)} not set): on one host leave "
                            f"{setting_named('kvstore', 'auto')}; across hosts start "
                            f"the cluster with MXNet's tools/launch.py, or on SageMaker with "
                            f"distribution={{'parameter_server': {{'enabled': True}}}}")
    if kvstore.startswith("dist"):
        for name in ("DMLC_NUM_SERVER", "DMLC_NUM_WORKER"):
            # (ps-lite reads them with atoi: "2.0" is 2, "two" is 0, a cluster of no worker that never forms; and
            # the checks of a checkpoint's number of workers, before the data is read, were skipped)
            count = os.environ[name].strip()
            if not (count.isascii() and count.isdigit() and int(count) > 0):
                raise FastTextError(f"{name} must be a whole number above 0 (how many the cluster waits for), "
                                    f"got {os.environ[name]!r}")
        check_scheduler_address(os.environ["DMLC_PS_ROOT_URI"], os.environ["DMLC_PS_ROOT_PORT"])
        check_interface()
        timeout_from_environment()  # a bad FASTTEXT_CLUSTER_TIMEOUT: refused now, not once joined


def check_interface():
    """A DMLC_INTERFACE this host has no IPv4 address on (a misspelt or absent interface), without DMLC_NODE_HOST:
    ps-lite (van.cc: GetIP over getifaddrs, AF_INET) found no address and mx.kv.create raised "Check failed:
    !ip.empty(): failed to get ip" in the join, a traceback, while the other workers waited their timeout. Refused
    before the data is read, as ps-lite matches it: an interface whose name starts with it (strncmp over its length:
    ``eth`` joins with eth0's address), and "" as unset. Not refused where this host cannot say which interfaces have
    an address (a sandbox refusing the ioctl, no IPv4 sockets): MXNet may still join. DMLC_NODE_HOST, which ps-lite
    takes instead, is not checked here."""
    interface = os.environ.get("DMLC_INTERFACE")
    if not interface or os.environ.get("DMLC_NODE_HOST"):
        return
    have = _ipv4_interfaces(interface)
    if have is not None and not any(name.startswith(interface) for name in have):
        raise FastTextError(f"DMLC_INTERFACE {interface!r} is no network interface with an IPv4 address on this host "
                            f"(those with one: {', '.join(have) or 'none'}): MXNet would find no address to give the "
                            f"other workers; name one of them, or set DMLC_NODE_HOST to this host's address")


def _ipv4_interfaces(interface):
    """The names of this host's network interfaces with an IPv4 address (SIOCGIFADDR), ``interface`` among them if it
    is one (an alias such as eth0:1, which if_nameindex does not list), sorted; None where this host cannot tell."""
    import errno
    import fcntl
    import struct

    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        names = []
    found = set()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            for name in {*names, interface}:
                encoded = name.encode("utf-8", "surrogateescape")
                if not encoded or len(encoded) > 15 or b"\0" in encoded:  # (IFNAMSIZ: no interface has such a name)
                    continue
                try:
                    fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", encoded))  # SIOCGIFADDR
                except OSError as exc:
                    if exc.errno not in (errno.ENODEV, errno.EADDRNOTAVAIL):  # (no such interface; no IPv4 address)
                        raise
                    continue
                found.add(name)
    except OSError:  # (no IPv4 socket, the ioctl refused: a sandbox's)
        return None
    return sorted(found)


def workers_to_come(kvstore):
    """How many workers a run of ``kvstore`` trains with, known before its cluster is joined (a checkpoint written
    by another number is refused before the data is read): a ``dist_*`` cluster's ``DMLC_NUM_WORKER``, which MXNet's
    kvstore takes its number from; 1 otherwise. None where that is no whole number (the join says what is wrong)."""
    if not str(kvstore).startswith("dist"):
        return 1
    count = os.environ.get("DMLC_NUM_WORKER", "").strip()
    return int(count) if count.isdigit() else None


def check_scheduler_address(host, port):
    """A scheduler address that cannot be one: MXNet's workers waited for it for ever (an unknown host
    name too), where a scheduler merely not started yet is waited for (up to TIMEOUT_ENV)."""
    if not port.strip().isdigit() or not 0 < int(port) < 65536:
        raise FastTextError(f"DMLC_PS_ROOT_PORT must be a port number, got {port!r}")
    try:
        socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FastTextError(f"DMLC_PS_ROOT_URI {host!r} (the scheduler's address) does not resolve: "
                            f"{exc.strerror or exc}") from None


def this_host():
    """The name the other workers know this one by: SageMaker's host name (algo-2), else the machine's."""
    return os.environ.get("SM_CURRENT_HOST") or socket.gethostname()


def own_address():
    """The address the other workers reach this one at: ``DMLC_NODE_HOST`` when set (as ps-lite uses it), else
    the local end of the route to the scheduler (a UDP connect sends nothing)."""
    if os.environ.get("DMLC_NODE_HOST"):
        return os.environ["DMLC_NODE_HOST"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((os.environ["DMLC_PS_ROOT_URI"], int(os.environ["DMLC_PS_ROOT_PORT"])))
        return probe.getsockname()[0]


def listen_everywhere():
    """A listening socket on every interface of this host: the address the others are told (:func:`own_address`)
    may resolve here to another interface than on their hosts (Debian maps the machine's own name to 127.0.1.1),
    or be no address of this host at all (behind a NAT), where a port bound to it alone answered no peer (which
    then ended a healthy run) or could not be bound. Dual-stack where the host has IPv6 (a DMLC_NODE_HOST that is
    an IPv6 address or resolves to one)."""
    if socket.has_dualstack_ipv6():
        try:
            return socket.create_server(("", 0), family=socket.AF_INET6, dualstack_ipv6=True, backlog=64)
        except OSError:  # IPv6 compiled in but disabled on this host
            pass
    return socket.create_server(("", 0), backlog=64)


class Watch:
    """This worker's port, and the thread that ends a run its cluster can no longer finish (module doc)."""

    def __init__(self, timeout=None, quiet_status=None):
        self.timeout = timeout_from_environment() if timeout is None else timeout
        self.quiet_status = quiet_status  # ends with this status and no line of its own (tell_the_others: one is out)
        self.address = own_address()
        self.listener = listen_everywhere()
        self.port = self.listener.getsockname()[1]
        self.peers = []  # the other workers' descriptions (agree), once known
        self.rank = None  # this worker's, once joined (introduce)
        self.phase = None  # what this worker waits for, while it waits on the cluster
        self.last = time.monotonic()
        self.scheduler_checked = False
        self.stop, self.stop_ends_at = None, None  # a stop while joining (stopped), and when it ends the process
        self.stops_by_default = ()  # the stops held while joining whose disposition is the default (they end by it)
        self.stop_told = False  # introduce told the others of this one's stop
        self.told_stopped = []  # what was sent on this one's port as another worker's stop (tell_stopped), unchecked
        self.closed = threading.Event()
        _joined.append(self)
        _ever_joined.append(self)
        for target in (self._answer, self._watch):
            threading.Thread(target=target, daemon=True, name=f"fasttext-cluster{target.__name__}").start()

    def close(self):
        """Stop watching: the port is closed and both threads end (a run's Watch lives as long as its process; a
        closed one's answer thread slept in a loop for ever, and its sleeps ran into other code that patched
        ``time.sleep``)."""
        self.closed.set()
        if self in _joined:
            _joined.remove(self)
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the answer thread's accept(), which close() alone does not
        except OSError:
            pass
        self.listener.close()

    def tick(self):
        """A step done: the cluster makes progress."""
        self.last = time.monotonic()

    @contextlib.contextmanager
    def armed(self, phase):
        """Watch the cluster while the block waits on it (``phase``: what it waits for, as the error says)."""
        self.phase, self.last = phase, time.monotonic()
        try:
            yield
        finally:
            self.phase = None

    def stopped(self, signum):
        """A stop while this worker joins (:func:`stops_told_as_it_joins`, from its thread, while the main thread waits
        in MXNet's C++): it has :data:`STOPPED_TELLS_FOR` seconds to join and tell the others; a second stop ends the
        process now, in the first one's line and status."""
        from .stops import Interrupted

        if self.stop is not None:
            self._end_stopped(self.stop)
        # (its end first: the watch thread reads the stop, then its end, and must never find the stop without it)
        self.stop_ends_at = time.monotonic() + STOPPED_TELLS_FOR
        self.stop = Interrupted(signum)

    def _end_stopped(self, stop):
        """End the process in ``stop``'s line and status; by the signal itself where its disposition is the default (a
        process without a handler for it, the Python API's SIGTERM: its parent sees it killed by the signal, as where
        the join ends in time, not an exit status of 143)."""
        from .stops import stop_message

        self.fail(stop_message(stop), status=stop.exit_status,
                  signum=stop.signum if stop.signum in self.stops_by_default else None)

    def _answer(self):
        while not self.closed.is_set():  # a connection accepted is the answer: this process lives
            try:
                connection, _ = self.listener.accept()
            except OSError:
                self.closed.wait(0.1)
                continue
            with connection:  # (a probe sends nothing and closes: b"" at once; another worker may say it was stopped)
                told = _read_told(connection)
            if isinstance(told, dict) and isinstance(told.get("stopped"), dict) and len(self.told_stopped) < 64:
                self.told_stopped.append(told["stopped"])  # (checked against the peers by the watch: _stopped_peer)

    def _watch(self):
        while not self.closed.wait(1):
            stop = self.stop  # (read once: the join's end clears it from another thread)
            if stop is not None and time.monotonic() >= self.stop_ends_at:
                self._end_stopped(stop)
            phase, stalled = self.phase, time.monotonic() - self.last
            if phase is None:
                continue
            stopped_peer = self._stopped_peer()
            if stopped_peer is not None:
                self.fail(was_stopped(stopped_peer))
            if stalled >= self.timeout and self._still_stuck(phase, stalled):
                self.fail(f"the cluster did not move for {self.timeout:g} s {phase}: " + (
                    "every other worker answers, so a parameter server or the scheduler may have stopped" if self.peers
                    else "a worker or server did not join (see the other hosts' logs), or the scheduler at "
                         f"{os.environ.get('DMLC_PS_ROOT_URI')}:{os.environ.get('DMLC_PS_ROOT_PORT')} cannot be reached")
                    + f"; the time allowed is {TIMEOUT_ENV} (seconds)")
            if phase == JOINING and stalled >= PROBE_AFTER and not self.scheduler_checked:
                self.scheduler_checked = True
                host, port = os.environ.get("DMLC_PS_ROOT_URI"), os.environ.get("DMLC_PS_ROOT_PORT")
                if scheduler_port_taken(host, port) and self._still_stuck(phase, stalled):
                    self.fail(f"the scheduler's address {host}:{port} (DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT) answers, "
                              f"but not as MXNet's scheduler: another program holds that port, so the scheduler "
                              f"could not listen on it; start the cluster again with a free DMLC_PS_ROOT_PORT")
            if stalled >= PROBE_AFTER and self.peers:
                lost = self.lost_peers()
                if lost and self._still_stuck(phase, stalled):
                    self.fail(f"worker {lost[0]['rank']} on host {lost[0]['host']} ({lost[0]['address']}) stopped "
                              f"{phase}: its process ended or its host is lost (see that host's log); this worker "
                              f"cannot go on without it")

    def _still_stuck(self, phase, stalled):
        """Whether the main thread still waits where it did (no step, same phase) when the watch is about to end the
        run: not a race with a step or an epoch's end that came meanwhile."""
        return self.phase == phase and time.monotonic() - self.last >= stalled

    def _stopped_peer(self):
        """The peer that told this one on its port that it was stopped (:func:`tell_stopped`), or None. Told by its
        rank and port, as the exchange gave them: the port listens on every interface, and a stranger's message (or
        one of another run's, on a port number used again) must not end this run, nor a malformed one its watch."""
        told = [(worker.get("rank"), worker.get("port")) for worker in list(self.told_stopped)]
        return next((peer for peer in self.peers if (peer["rank"], peer["port"]) in told), None)

    def lost_peers(self):
        """The other workers that do not answer, asked twice (a refused connect: the process is gone)."""
        lost = [peer for peer in self.peers if not _answers(peer)]
        if lost:
            time.sleep(1)
            lost = [peer for peer in lost if not _answers(peer)]
        return lost

    def fail(self, message, status=2, signum=None):
        """End this process now, with ``status`` (or by ``signum``'s default action: :func:`_end_by`), from this
        thread: the main thread is blocked inside MXNet, which no signal or exception reaches. Nothing is being written
        (the watch is armed only while the worker waits on the cluster)."""
        if self.quiet_status is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(self.quiet_status)
        line = error_line(message)
        print(line, file=sys.stderr, flush=True)
        for report in REPORTERS:
            try:
                report(line)
            except Exception:  # the line is out; a report that fails must not keep the process alive
                pass
        sys.stdout.flush()
        if signum is not None:
            _end_by(signum)
        os._exit(status)


def _end_by(signum):
    """End this process by ``signum``, its disposition put back to the default first, from any thread (Python's
    ``signal.signal`` works in the main thread alone, which waits in MXNet's C++). Returns where that cannot be done
    (no C library to call): the caller exits then."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None)
        libc.signal.restype, libc.signal.argtypes = ctypes.c_void_p, (ctypes.c_int, ctypes.c_void_p)
    except (OSError, AttributeError):
        return
    if libc.signal(int(signum), int(signal.SIG_DFL)) != ctypes.c_void_p(-1).value:  # (SIG_ERR: not put back)
        os.kill(os.getpid(), signum)  # (delivered before kill returns, to this thread: no handler, so the process ends)


def scheduler_port_taken(host, port):
    """Whether the scheduler's address answers, twice, with bytes that are not the signature a ZeroMQ socket opens
    every connection with (:func:`_greeting`): another program holds the port, and MXNet's scheduler, which could not
    listen on it, has ended; the workers waited for FASTTEXT_CLUSTER_TIMEOUT, sending to that program. (Nothing
    listening is no answer: the scheduler may not have started yet, which the timeout waits for; nor is silence.)"""
    return all(_greeting(host, port) is False for _ in range(2))


ZMTP_SIGNATURE = bytes([ZMTP_SIGNATURE_START]) + bytes(ZMTP_SIGNATURE_BYTES - 2) + bytes([ZMTP_SIGNATURE_END])


def _greeting(host, port):
    """True: ``host:port`` opens with ZMTP's signature; False: it sends other bytes, at once (an ssh server) or once
    this worker has sent ZMTP's signature itself, as a ZeroMQ peer does (a program that waits for its client to speak
    first: an HTTP server's error); None: nothing listens (or the address is unreachable), the connection is closed
    before a byte comes (a forwarder, ssh -L or docker-proxy, while nothing listens behind it yet: a scheduler started
    slowly), or no byte comes within PROBE_TIMEOUT seconds either way. That silence is no proof of another program: a
    scheduler whose host is frozen (swapping, suspended) has its connections accepted by the kernel and greets only
    once it runs again; it was blamed on another program, and a healthy cluster ended, after 5 s of it."""
    try:
        connection = socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT)
    except (OSError, ValueError):
        return None
    with connection:
        got = _first_bytes(connection)
        if got == b"":
            try:
                connection.sendall(ZMTP_SIGNATURE)
            except OSError:
                return None
            got = _first_bytes(connection)
    if not got or (got[0] == ZMTP_SIGNATURE_START and len(got) < ZMTP_SIGNATURE_BYTES):
        return None  # (nothing, or the start of a signature cut short by the window: not another program's bytes)
    return got[0] == ZMTP_SIGNATURE_START and got[-1] == ZMTP_SIGNATURE_END


def _first_bytes(connection):
    """Up to ZMTP_SIGNATURE_BYTES bytes ``connection`` sends within PROBE_TIMEOUT: b"" when none came in time, None
    when it was closed (or reset) before the first."""
    got = b""
    try:
        while len(got) < ZMTP_SIGNATURE_BYTES:
            more = connection.recv(ZMTP_SIGNATURE_BYTES - len(got))
            if not more:
                return got or None
            got += more
    except socket.timeout:
        pass
    except OSError:
        return got or None
    return got


def _read_told(connection):
    """What another worker sent on this one's port (:func:`tell_stopped`), as JSON; None for anything else (a probe:
    nothing, and closed at once), or nothing within :data:`PROBE_TIMEOUT` (a second was less than a loaded machine
    may hold a worker between its connect and its send: the others then said "its process ended", not "was
    stopped"). A probe's connect is answered by the kernel's listen queue meanwhile, not by this wait."""
    connection.settimeout(PROBE_TIMEOUT)
    got = b""
    try:
        while len(got) < AGREE_BYTES:
            more = connection.recv(AGREE_BYTES - len(got))
            if not more:
                break
            got += more
        return json.loads(got) if got else None
    except (OSError, ValueError):
        return None


def tell_stopped(watch):
    """Tell the other workers, on their ports (the watch's answer), that this one was stopped: a stop held in
    :func:`introduce`'s exchange after this worker's push (stops_told_as_it_joins) reached them only through the
    probe, :data:`PROBE_AFTER` seconds on, as "its process ended"; they now end in :func:`was_stopped`'s line."""
    told = json.dumps({"stopped": {"rank": watch.rank, "port": watch.port}}).encode("utf-8")  # (Watch._stopped_peer)
    for peer in watch.peers:
        try:
            with socket.create_connection((peer["address"], peer["port"]), timeout=PROBE_TIMEOUT) as connection:
                connection.sendall(told)
        except OSError:  # (that one is gone: the probe finds it)
            pass


def was_stopped(worker):
    return f"worker {worker['rank']} (host {worker['host']}) was stopped before training"


def _answers(peer):
    try:
        socket.create_connection((peer["address"], peer["port"]), timeout=PROBE_TIMEOUT).close()
        return True
    except OSError:
        return False


@contextlib.contextmanager
def armed(watch, phase):
    """``watch.armed(phase)``, or nothing without a cluster (``watch`` None)."""
    if watch is None:
        yield
    else:
        with watch.armed(phase):
            yield


def describe(watch, rank, data_id, config, classes, resumed_epoch=None):
    """What this worker tells the others: who it is, where it answers, what it trains on, and the epoch of the
    checkpoint it resumes from (None: it starts anew)."""
    settings = {k: v for k, v in config.to_dict().items() if k not in LOCAL_SETTINGS}
    return {"rank": int(rank), "host": this_host(), "address": watch.address, "port": watch.port,
            "data": data_id, "classes": hashlib.sha256("\n".join(classes).encode("utf-8")).hexdigest(),
            "settings": settings, "resumed": resumed_epoch}


def agree(kv, description):
    """Exchange every worker's :func:`describe` through the kvstore and refuse (every worker the same way) a
    cluster whose workers differ in data or settings. Before the optimizer is set: a push to a key the servers
    have not seen initializes it (kvstore_dist_server.h), in dist_sync and dist_async alike."""
    theirs = _exchange(kv, description, AGREE_KEY)
    refuse_differences(theirs)
    return theirs


def introduce(kv, watch, stopped=False):
    """Right after the join, every worker's address for the watch (its peers), and any other worker's failure before
    it joined (:func:`tell_the_others`) or stop while joining, raised naming it. Known only from :func:`agree` on, the
    peers of a worker lost before it (a table too large for one host's memory, a checkpoint refused on one host) went
    unasked: the others waited for it while comparing, for FASTTEXT_CLUSTER_TIMEOUT. ``stopped``: this worker was
    stopped while joining (:func:`stops_told_as_it_joins`, which raises the stop once this returns)."""
    mine = _whoami(kv, watch)
    watch.rank, watch.stop_told = mine["rank"], stopped
    theirs = _exchange(kv, dict(mine, stopped=True) if stopped else mine, INTRODUCE_KEY)
    for worker in theirs:
        if worker["rank"] == kv.rank:
            continue
        if worker.get("stopped"):
            raise FastTextError(was_stopped(worker))
        if "failed" in worker:
            raise FastTextError(f"worker {worker['rank']} (host {worker['host']}) failed before training: "
                                f"{worker['failed']}")
    watch.peers = [peer for peer in theirs if peer["rank"] != kv.rank]


def _whoami(kv, watch):
    return {"rank": int(kv.rank), "host": this_host(), "address": watch.address, "port": watch.port}


def _exchange(kv, description, first_key):
    """Push this worker's ``description`` (JSON) to its key (``first_key`` + its rank), wait until every worker has
    pushed its own: every worker's, by rank. (The first push to a key the servers have not seen initializes it.)"""
    import mxnet as mx
    import numpy as np  # (here: the CLI imports this module on a train command's error, for tell_the_others)

    payload = json.dumps(description, sort_keys=True).encode("utf-8")
    if len(payload) > AGREE_BYTES:  # (settings are a few hundred bytes; a failure's line is cut: tell_the_others)
        raise ValueError("cluster.agree: description too long")
    mine = mx.nd.array(np.frombuffer(payload.ljust(AGREE_BYTES), dtype=np.uint8).astype(np.float32))
    kv.push(first_key + kv.rank, mine)
    mx.nd.waitall()  # the push has reached its server
    kv._barrier()  # every worker's has
    theirs = []
    for rank in range(kv.num_workers):
        out = mx.nd.zeros((AGREE_BYTES,))
        kv.pull(first_key + rank, out=out)
        theirs.append(json.loads(out.asnumpy().astype(np.uint8).tobytes().rstrip(b" ")))
    return theirs


def tell_the_others(failure, status, shown=None):
    """A worker of a cluster that failed before joining it (its data unreadable, its checkpoint refused: every worker
    reads its data before it joins; a bug; a stop) joins it now, to tell the others in :func:`introduce`'s exchange:
    they waited for it in ``mx.kv.create`` for FASTTEXT_CLUSTER_TIMEOUT (30 minutes by default), and then blamed
    a worker that did not join, any one. They now end as they join, in one line with this one's reason. Then
    this process exits with ``status`` (:func:`exit_if_joined`), having said only a note that it waits and how long:
    where the others never come it ends quietly after :data:`FAILED_TELLS_FOR` seconds, or :data:`STOPPED_TELLS_FOR`
    when ``failure`` is a stop (a stopped host must not hang), at most FASTTEXT_CLUSTER_TIMEOUT; a stop ends that
    wait at once (the first stop where ``failure`` is not one, the second where it is). Nothing is done outside a
    cluster's worker (``DMLC_ROLE=worker``, as MXNet's tools/launch.py and SageMaker's toolkit start it), once joined,
    or where it could not join (its ``DMLC_*`` variables are what it failed on). Where MXNet cannot start in this
    process (mxnet_env.cannot_start) a child joins for it (:func:`_telling_child`), and this one exits once it ends.

    ``failure``: the error line this host said, a bug's exception or a stop (a ``KeyboardInterrupt``). ``shown``: what
    this host shows of it (a bug's traceback), called only once it is sure to join (and so to exit here: where it
    returns, the caller's raise shows the traceback)."""
    if not _may_tell():
        return
    stopped = isinstance(failure, KeyboardInterrupt)
    told = {"stopped": True} if stopped else {"failed": _reason_told(failure)}
    try:
        _check_cluster_settings("dist_sync")
        from .mxnet_env import cannot_start

        wait = min(STOPPED_TELLS_FOR if stopped else FAILED_TELLS_FOR, timeout_from_environment())
        # (MXNet cannot start here, what this worker may have failed on: OMP_NUM_THREADS=abc aborted its import, exit
        # 134 after the line, so it told nobody, and the others waited FASTTEXT_CLUSTER_TIMEOUT)
        child = _telling_child(told, wait) if cannot_start() else None
        if child is None:
            import mxnet as mx  # (MXNet that could not load, what the job may have failed on: nothing to join with)

            watch = Watch(quiet_status=status, timeout=wait)
    except Exception:
        return
    if shown is not None:
        shown()
    # (its own line is out: say why it does not end yet; a user who sees no other worker coming may stop it, where
    # a stop can end the wait: not from another thread than the main one, the Python API's)
    stops_end_it = _exit_on_a_stop(status, child)
    print(f"note: waiting up to {wait:g} s for the other workers to join the cluster, to tell them why this one "
          f"ended" + (f"; {'a second' if stopped else 'a'} stop ends the wait" if stops_end_it else ""),
          file=sys.stderr, flush=True)
    if child is not None:
        _wait_for_the_child(child, wait)
        _quiet_exit(status)  # (as a join ends: the caller's cleanup and its raise of a bug are behind its line)
    _join_to_tell(mx, watch, told, status)


def _join_to_tell(mx, watch, told, status):
    """Join the cluster and tell the others ``told``, then exit with ``status`` (:func:`exit_if_joined`)."""
    try:
        with watch.armed("while telling the others its error"):
            # (dist_sync whatever the others' type: the cluster ends at this exchange, before any training push)
            kv = mx.kv.create("dist_sync")
            _exchange(kv, dict(_whoami(kv, watch), **told), INTRODUCE_KEY)
    except BaseException:  # (MXNet's engine, what the job failed on: its line is out, and no traceback may follow it)
        pass
    exit_if_joined(status)  # (here, kv alive: its destructor, as this returned, waited in the exit barrier for ever)


# Seconds the child that tells the others (_telling_child) may take beyond its wait: MXNet's start (~1-3 s)
CHILD_STARTS_WITHIN = 60


def _telling_child(told, wait):
    """A process that joins the cluster for this one, where MXNet cannot start (mxnet_env.cannot_start), and tells the
    others ``told``: started with MXNet's defaults and one thread each (mxnet_env.environment_it_starts_in), waiting at
    most ``wait`` seconds for them. It says nothing (this one's line is out) and ends quietly where its MXNet cannot
    start either (an address-space limit below even one thread's need): the others then wait their timeout."""
    import subprocess

    from .mxnet_env import environment_it_starts_in

    code = "import sys, fasttext_lib.cluster as c; c.tell_for_the_parent(sys.argv[1], float(sys.argv[2]))"
    return subprocess.Popen([sys.executable, "-c", code, json.dumps(told), repr(wait)], env=environment_it_starts_in(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for_the_child(child, wait):
    import subprocess

    try:
        child.wait(timeout=wait + CHILD_STARTS_WITHIN)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def tell_for_the_parent(told, wait):
    """The child of :func:`_telling_child`: start MXNet, join, tell the others ``told`` (JSON), exit (0, quietly)."""
    from .mxnet_env import check_room_to_join, start_mxnet

    try:
        start_mxnet()
        check_room_to_join("dist_sync")  # (where it has none, the join would abort: it ends quietly, untold)
        import mxnet as mx

        watch = Watch(quiet_status=0, timeout=wait)
    except BaseException:
        _quiet_exit(0)
    _join_to_tell(mx, watch, json.loads(told), 0)


def _may_tell():
    """Whether this process is a cluster's worker that has not joined (MXNet joins once per process)."""
    return not _ever_joined and os.environ.get("DMLC_ROLE") == "worker"


def _reason_told(failure):
    """The reason the others are told: an error line without its ``error: ``, or a bug's type and message; cut to
    fit the exchange's bytes (a long path's line)."""
    if isinstance(failure, str):
        reason = failure[len("error: "):] if failure.startswith("error: ") else failure
    else:
        reason = bug_reason(failure)
    while len(json.dumps(reason)) > AGREE_BYTES // 2:
        reason = reason[:len(reason) * 3 // 4]
    return reason


def _exit_on_a_stop(status, child=None):
    """A stop while a failed or stopped worker tells the others (joining, in MXNet's C++) ends the process at once,
    quietly (its line is out), with ``status``, and the ``child`` that tells them for it (_telling_child) if any; a
    stop this process ignores stays ignored (:func:`_stops_to_catch`). Returns whether a stop ends it (not from another
    thread than the main one: nothing is done there; nor where every stop is ignored)."""
    import signal

    def end(signum):
        if child is not None:
            child.kill()
        _quiet_exit(status)

    caught = _stops_to_catch()
    if not caught or _on_stops_in_c(end) is None:
        return False
    for signum in caught:
        signal.signal(signum, lambda *_: None)  # (a Python handler: the C one writes the wakeup byte)
    return True


def _stops_to_catch():
    """The stopping signals whose handlers a wait on the cluster replaces (:func:`_exit_on_a_stop`,
    :func:`stops_told_as_it_joins`): those Python handles or leaves at their default. A signal ignored stays ignored (a
    script's ``cmd &`` job has SIGINT ignored: a Ctrl-C meant for the script's foreground ended the wait to tell the
    others, untold), and a handler set outside Python (``getsignal`` None) stays in place."""
    import signal

    from .stops import stopping_signals

    return [signum for signum in stopping_signals()
            if callable(signal.getsignal(signum)) or signal.getsignal(signum) == signal.SIG_DFL]


def _quiet_exit(status):
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _on_stops_in_c(on_stop):
    """Call ``on_stop(signum)``, in a thread, for each stopping signal from now on, also while the main thread waits in
    MXNet's C++ (joining a cluster), where no Python signal handler runs until the call returns: Python's C handler
    writes each handled signal's number to its wakeup descriptor, which the thread reads. -> a function that ends this
    (the previous descriptor put back); None outside the main thread (nothing done)."""
    import signal

    from .stops import stopping_signals

    reader, writer = os.pipe()
    os.set_blocking(writer, False)
    try:
        previous = signal.set_wakeup_fd(writer)
    except ValueError:  # not the main thread
        os.close(reader)
        os.close(writer)
        return None
    stopping = set(stopping_signals())

    def read():
        with open(reader, "rb", buffering=0) as bytes_in:
            for byte in iter(lambda: bytes_in.read(1), b""):  # (b"": the writer closed, by end())
                if byte[0] in stopping:
                    on_stop(byte[0])

    reading = threading.Thread(target=read, daemon=True, name="fasttext-cluster-stops")
    reading.start()

    def end():
        signal.set_wakeup_fd(previous)
        os.close(writer)
        # (a stop's byte written before is read now, not after the caller went on: read late, it set the watch's stop
        # once stops_told_as_it_joins had cleared it, and the watch ended the caller's cleanup in the stop's line)
        reading.join()

    return end


@contextlib.contextmanager
def stops_told_as_it_joins(watch):
    """Around a worker's join (``mx.kv.create`` and :func:`introduce`): a stop (SIGTERM, Ctrl-C) that lands there waits
    for MXNet's C++ to return, and was raised just after ``mx.kv.create``, before this worker told the others where it
    answers: they waited for it in :func:`introduce` for FASTTEXT_CLUSTER_TIMEOUT; and while the others had not joined
    yet, it waited for them as long. Now the stop is held until the join is done, the block's ``stopped()`` says
    :func:`introduce` is to tell the others (they end in one line saying it was stopped; a stop that came in its
    exchange, after this worker's push, is told on their ports: :func:`tell_stopped`), and it is raised at the
    block's end (the caller's stop line, its cleanup). Meanwhile the watch ends the process in the stop's line and
    status if the join is not done within :data:`STOPPED_TELLS_FOR` seconds of the stop, or on a second stop.
    A stop whose handler is the default (SIGTERM in the Python API: it ended the process inside the join, untold, and
    the others waited for it as long) is held and told the same way, then comes as it would have: its default is put
    back and the signal raised again, which ends the process by it; where the watch ends the process (the join not
    done in time), it ends by the signal too, after the stop's line (:meth:`Watch._end_stopped`). Handlers set outside
    Python (``getsignal`` None) and ignored signals are left as they are (:func:`_stops_to_catch`); ``watch`` None (no
    cluster) or outside the main thread: nothing done."""
    import signal

    held = []
    end = _on_stops_in_c(watch.stopped) if watch is not None else None
    if end is None:
        yield lambda: False
        return
    previous, caught = {}, _stops_to_catch()
    # (before a handler is set: a stop's byte comes only once it is, and the watch may end the process by it)
    watch.stops_by_default = [signum for signum in caught if signal.getsignal(signum) == signal.SIG_DFL]
    try:
        for signum in caught:
            previous[signum] = signal.signal(signum, lambda signum, frame: held.append(signum))
        yield lambda: bool(held)
    finally:
        end()
        watch.stop = None  # (joined: the stop is the caller's from here, its cleanup not cut short by the watch)
        watch.stops_by_default = ()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if held and watch.peers and not watch.stop_told:  # (held in introduce's exchange, after this one's push)
            tell_stopped(watch)
        if held and callable(previous[held[0]]):
            previous[held[0]](held[0], None)  # (the stop as it would have come: the caller's handler raises it)
        elif held:
            signal.raise_signal(held[0])  # (its default, put back above: the process ends by it)


_callers_tell = []  # the CLI's and the training job's main, while they run: they tell the others themselves


@contextlib.contextmanager
def caller_tells():
    """The CLI's command and the training job: they tell the others (:func:`tell_the_others`) once their own cleanup
    has run and their line is out; :func:`train`'s own telling (:func:`told_if_it_fails`) leaves it to them."""
    _callers_tell.append(True)
    try:
        yield
    finally:
        _callers_tell.pop()


@contextlib.contextmanager
def told_if_it_fails():
    """The Python API's ``train()``, in a cluster's worker: what fails before it joins (its data, a bug, a stop) is
    told to the others, as the CLI tells them, and this process exits there (it joined the cluster; the kvstore's
    exit barrier would wait for ever), after the line the CLI would say (a bug: its traceback). Called by the CLI
    or the training job, nothing here: they tell the others themselves (:func:`caller_tells`)."""
    try:
        yield
    except BaseException as exc:
        if not _callers_tell and _may_tell():
            _tell_as_the_cli_would(exc)
        raise


def _tell_as_the_cli_would(exc):
    import traceback

    from .errors import is_out_of_memory, out_of_memory_line
    from .stops import stop_message

    def say(line):
        return lambda: print(line, file=sys.stderr, flush=True)

    if isinstance(exc, KeyboardInterrupt):
        tell_the_others(exc, getattr(exc, "exit_status", 130), shown=say(error_line(stop_message(exc))))
    elif isinstance(exc, FastTextError) or is_out_of_memory(exc):
        line = error_line(exc if isinstance(exc, FastTextError) else out_of_memory_line(exc))
        tell_the_others(line, 2, shown=say(line))
    elif isinstance(exc, Exception):
        tell_the_others(exc, 1, shown=traceback.print_exc)


def refuse_differences(workers):
    """Raise :class:`FastTextError` naming the first worker whose data, settings or resumed checkpoint differ from
    worker 0's."""
    first = workers[0]
    for other in workers[1:]:
        where = f"worker {other['rank']} (host {other['host']}) and worker 0 (host {first['host']})"
        if other["classes"] != first["classes"] or other["data"] != first["data"]:
            raise FastTextError(f"{where} read different training data (other documents, labels or vocabulary): "
                                f"every worker must read the same data and takes its own share of it. On SageMaker "
                                f"give the train channel S3DataDistributionType FullyReplicated (the default), not "
                                f"ShardedByS3Key")
        changed = [f"{k} {first['settings'].get(k)!r} -> {other['settings'].get(k)!r}"
                   for k in sorted(set(first["settings"]) | set(other["settings"]))
                   if first["settings"].get(k) != other["settings"].get(k)]
        if changed:
            raise FastTextError(f"{where} train with different settings ({', '.join(changed)}): every worker must "
                                f"be given the same settings")
        if other["resumed"] != first["resumed"]:
            # (a checkpoint dir on one host's disk alone: each worker stepped through its own number of epochs, and
            # the one done first waited for the others in the kvstore's exit barrier, both for FASTTEXT_CLUSTER_TIMEOUT.
            # Rank 0 cannot be pinned to the host that wrote them: ps-lite 1.9.1's scheduler (van.cc,
            # ProcessAddNodeCommandAtScheduler) sorts the nodes by address, descending, then port, and numbers them so;
            # DMLC_RANK is only written for the process, never read. Hosts given other addresses swap the ranks.)
            raise FastTextError(f"{where} resume from different checkpoints (worker 0: {_resumed(first)}, worker "
                                f"{other['rank']}: {_resumed(other)}): every worker must resume from the same one, and only "
                                f"the first (rank 0) writes them, which MXNet's scheduler picks by the hosts' "
                                f"addresses, not by who wrote them before; give every host the same "
                                f"{setting_named('checkpoint_dir')} (an s3:// one, or on SageMaker the job's "
                                f"checkpoint_s3_uri), or copy the newest epoch-* folder into every host's")


def _resumed(worker):
    return "none" if worker["resumed"] is None else f"epoch {worker['resumed']}"
