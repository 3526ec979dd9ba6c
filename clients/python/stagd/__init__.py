# SPDX-License-Identifier: Apache-2.0
"""stagd — the Python client of the stagd daemon.

    import stagd
    client = stagd.connect()          # or stagd.connect("127.0.0.1:7420")
    client.version().version
    stagd.health()                    # "SERVING", through a default client

`connect(addr=None, tls_ca=None, token=None, autostart=None)` resolves the address as `addr`, else $STAGD_ADDR,
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

A daemon on the network (docs/security.md): `connect(addr, tls_ca="ca.pem",
token="...")` — TLS verified against the CA file (`tls_cert`/`tls_key` for mutual TLS)
and a bearer token (default $STAGD_TOKEN); such a daemon is never autostarted.

The programming model (docs/client.md, TF Eager §4): `stagd.constant`, `stagd.Tensor`
(device-resident handles, eager ops), `stagd.Variable`, `stagd.GradientTape`,
`stagd.grad`, `stagd.function` (staging with a trace cache), `stagd.stage_source`
(Python source staged by the daemon itself, docs/pyfront.md), `stagd.device`,
`stagd.list_devices`, `stagd.Checkpoint`, `stagd.init_scope`, `stagd.py_func`.
"""
import os

from . import client as _client_module
from .client import (CONNECT_TIMEOUT, DEFAULT_ADDR, AssertionFailed, Cancelled, Client,
                     DaemonUnavailable, DeadlineExceeded, FailedPrecondition, IndexOutOfBounds,
                     Internal, InvalidArgument, NotFound, ResourceExhausted, ShapeMismatch,
                     SpeculationFailed, StagdError, Unauthenticated, Unavailable, Unimplemented,
                     Unsupported)
from . import daemon
from .function import function, init_scope, py_func, TensorSpec  # staging (docs/client.md)
from .tape import GradientTape, grad
from .source import StagedSource, stage_source  # Python staged in the daemon (docs/pyfront.md)
from .runtime.calls import rep_fun  # @stagd.rep_fun: staged calls (docs/runtime.md)
from .runtime.directives import set_element_type, set_loop_options  # directives

# Loaded on first use (PEP 562), so `import stagd` does not import NumPy.
_TENSOR_NAMES = frozenset((
    "Tensor", "Variable", "constant", "convert_to_tensor", "device", "matmul", "add",
    "subtract", "multiply", "divide", "maximum", "minimum", "where", "exp", "log", "sqrt",
    "tanh", "sigmoid", "relu", "sin", "cos", "square", "transpose", "reshape", "cast",
    "reduce_sum", "reduce_mean", "softmax", "zeros", "ones", "random_normal",
    "random_uniform", "dropout", "eye", "flush_releases", "stack", "concat", "set_eager_async"))


def __getattr__(name):
    if name in _TENSOR_NAMES:
        from . import tensor
        value = getattr(tensor, name)
    elif name == "Checkpoint":
        from .checkpoint import Checkpoint as value
    elif name in ("export", "load", "ScalarSpec", "run_model", "run_staged"):  # docs/deploy.md
        from . import exported as module
        value = getattr(module, name)
    else:
        raise AttributeError(f"module 'stagd' has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = ["connect", "health", "version", "list_devices", "Client", "StagdError",
           "function", "init_scope", "py_func", "TensorSpec", "Tensor", "Variable",
           "constant", "device", "GradientTape", "grad", "Checkpoint", "set_default_client", "set_eager_async",
           "export", "load", "ScalarSpec", "run_model", "run_staged",
           "rep_fun", "set_element_type", "set_loop_options", "stage_source", "StagedSource",
           "DaemonUnavailable", "InvalidArgument", "NotFound", "DeadlineExceeded", "Cancelled",
           "FailedPrecondition", "ResourceExhausted", "Unimplemented", "Unavailable", "Unauthenticated",
           "Internal", "IndexOutOfBounds", "Unsupported", "ShapeMismatch", "AssertionFailed",
           "SpeculationFailed", "DEFAULT_ADDR"]

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


def connect(addr=None, tls_ca=None, token=None, autostart=None, timeout=CONNECT_TIMEOUT,
            tls_cert=None, tls_key=None):
    """Returns a Client for a serving daemon; see the module docstring. It becomes the
    default client: eager tensors, stagd.function and tapes use it from now on.

    tls_ca: a PEM file (path) of the CA that signed the daemon's certificate (--tls-cert);
    the connection then uses TLS. tls_cert/tls_key: this client's certificate and key,
    for a daemon with --tls-client-ca. token: a bearer token from the daemon's
    --auth-token-file (default $STAGD_TOKEN). A daemon that needs TLS or a token is never
    autostarted (docs/security.md)."""
    security = {"tls_ca": tls_ca, "tls_cert": tls_cert, "tls_key": tls_key, "token": token}
    client = _connect(addr, autostart, timeout, security)
    set_default_client(client)
    return client


def set_default_client(client):
    """Makes `client` the one eager tensors, stagd.function and tapes talk to."""
    global _default_client
    _default_client = client
    return client


def _connect(addr=None, autostart=None, timeout=CONNECT_TIMEOUT, security=None):
    addr = addr or os.environ.get("STAGD_ADDR") or DEFAULT_ADDR
    security = security or {}
    if security.get("tls_ca") or security.get("tls_cert"):
        client = Client(addr, **security)  # a protected daemon: never one of ours
        if client.is_serving(timeout=timeout):
            return client
        try:
            client.health(timeout=timeout)  # its error says why (a bad token, TLS)
        finally:
            client.close()
        raise DaemonUnavailable(f"no stagd daemon answers over TLS at {addr}")
    started = _autostarted.get(addr)
    if started is not None and started.proc.poll() is None:
        client = Client(started.addr)  # the daemon an earlier connect() started for addr
        client.daemon = started
        if client.is_serving(timeout=timeout):
            return client
        client.close()
    client = Client(addr, **security)
    if client.is_serving(timeout=timeout):
        return client
    if security.get("token") or os.environ.get("STAGD_TOKEN"):
        try:
            client.health(timeout=timeout)  # a wrong token is Unauthenticated, not "no daemon"
        except Unauthenticated:
            client.close()
            raise
        except StagdError:
            pass
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
        _default_client = _connect()
    return _default_client


_client_module.set_default_lookup(_client)  # how the layers below reach it (client.py)


def health(service=""):
    """Health status name of the default daemon ("SERVING")."""
    return _client().health(service)


def version():
    """VersionReply of the default daemon."""
    return _client().version()


def list_devices():
    """Devices of the default daemon (a list of Device messages: .name, .backend,
    .description, .is_default, ...)."""
    return _client().list_devices()


def load_ipython_extension(ip):
    """`%load_ext stagd`: the notebook magics (clients/python/stagd/ipython.py)."""
    from .ipython import load_ipython_extension as load
    load(ip)


def unload_ipython_extension(ip):
    from .ipython import unload_ipython_extension as unload
    unload(ip)
