"""stagd — the Python client of the stagd daemon.

    import stagd
    client = stagd.connect()          # or stagd.connect("127.0.0.1:7420")
    client.version().version
    stagd.health()                    # "SERVING", through a default client

`connect(addr=None, autostart=None)` resolves the address as `addr`, else $STAGD_ADDR,
else 127.0.0.1:7420, and checks that a daemon answers a health check within a short
timeout. When none answers:

* autostart=None (the default) starts a private local daemon (stagd.daemon) only when
  the address is the default one — a daemon you named elsewhere is never replaced
  silently; otherwise it raises `DaemonUnavailable`. The environment variable
  STAGD_AUTOSTART=1 (or 0) turns starting on (off) whatever the address.
* autostart=True starts a local daemon listening on the asked address itself when
  that is a `unix:PATH` or a loopback `host:port`, else on a private unix socket.
* autostart=False never starts one.

Daemons started this way stop when the interpreter exits.
"""
import os

from .client import (DEFAULT_ADDR, Cancelled, Client, DaemonUnavailable, DeadlineExceeded,
                     FailedPrecondition, Internal, InvalidArgument, NotFound, ResourceExhausted,
                     StagdError, Unavailable, Unimplemented)
from . import daemon
from .function import function  # stagd.function(fn): staging (docs/runtime.md)
from .runtime.calls import rep_fun  # @stagd.rep_fun: staged calls (docs/runtime.md)
from .runtime.directives import set_element_type, set_loop_options  # directives

__all__ = ["connect", "health", "version", "list_devices", "Client", "StagdError",
           "DaemonUnavailable", "InvalidArgument", "NotFound", "DeadlineExceeded", "Cancelled",
           "FailedPrecondition", "ResourceExhausted", "Unimplemented", "Unavailable",
           "Internal", "DEFAULT_ADDR"]

CONNECT_TIMEOUT = 2.0  # seconds a daemon gets to answer the first health check

_default_client = None
_autostarted = {}  # requested address → the LocalDaemon started for it


def _autostart_policy(autostart, addr):
    if autostart is not None:
        return bool(autostart)
    env = os.environ.get("STAGD_AUTOSTART", "").strip().lower()
    if env in ("1", "true", "yes", "on"):
        return True
    if env in ("0", "false", "no", "off"):
        return False
    return addr == DEFAULT_ADDR


def _local_listen(addr):
    """The address a started daemon should listen on to serve `addr`, or None (private)."""
    if addr == DEFAULT_ADDR:
        return None  # never grab the shared default port; serve privately
    if addr.startswith("unix:"):
        return addr
    host = addr.rsplit(":", 1)[0].strip("[]")
    if host in ("127.0.0.1", "localhost", "::1"):
        return addr
    return None


def connect(addr=None, autostart=None, timeout=CONNECT_TIMEOUT):
    """Returns a Client for a serving daemon; see the module docstring."""
    addr = addr or os.environ.get("STAGD_ADDR") or DEFAULT_ADDR
    started = _autostarted.get(addr)
    if started is not None and started.proc.poll() is None:
        client = Client(started.addr)  # the daemon an earlier connect() started for addr
        client.daemon = started
        if client.is_serving(timeout=timeout):
            return client
        client.close()
    client = Client(addr)
    if client.is_serving(timeout=timeout):
        return client
    client.close()
    if not _autostart_policy(autostart, addr):
        raise DaemonUnavailable(
            f"no stagd daemon answers at {addr} (health check timed out after {timeout:g} s); "
            "start one (stagd --listen ADDR), fix STAGD_ADDR, or pass autostart=True")
    d = daemon.start(_local_listen(addr))
    _autostarted[addr] = d
    client = Client(d.addr)
    client.daemon = d
    if not client.is_serving(timeout=10.0):
        raise DaemonUnavailable(f"started stagd (pid {d.pid}) on {d.addr}, but it does not "
                                f"answer health checks; its log:\n" + "\n".join(d.log))
    return client


def _client():
    global _default_client
    if _default_client is None:
        _default_client = connect()
    return _default_client


def health(service=""):
    """Health status name of the default daemon ("SERVING")."""
    return _client().health(service)


def version():
    """VersionReply of the default daemon."""
    return _client().version()


def list_devices():
    """Devices of the default daemon (a list of Device messages)."""
    return _client().list_devices()
