# SPDX-License-Identifier: Apache-2.0
"""exported.py — `stagd.export(fn, path, *example_args_or_specs)` writes a staged function as
a model version directory that any daemon can serve by name (`stagd --models DIR` serves
DIR/NAME/VERSION/) and `stagd.load(path)` reads back. See docs/deploy.md "Models".

    stagd.export(affine, "models/affine/1", stagd.TensorSpec((None, 3), "float32"))
    model = stagd.load("models/affine/1")
    model(np.ones((2, 3), np.float32))

The directory (format_version 1) holds four files:

    program.sexpr    the staged program: the defs it calls, then its entry def, whose
                     parameters are the inputs followed by the captures
    signature.json   {"entry", "inputs": [{name, kind tensor|scalar, dtype, shape}],
                     "captures": [{name, kind variable|tensor, dtype, shape}], "static"}
    variables.npz    the captures' values, one array per capture name (the checkpoint
                     format: a NumPy .npz archive, C order)
    manifest.json    {"format": "stagd-model", "format_version": 1, "name", "version",
                     "entry", "stagd_version", "files": {FILE: sha256}, "content_hash"}

content_hash is "sha256:" + the SHA-256 of the lines "FILE SHA256\\n" for program.sexpr,
signature.json and variables.npz in that order; the daemon refuses a version whose files
do not match it. A version directory is written beside its final place and renamed into
it, so a daemon scanning DIR never sees half of one, and an existing version is never
overwritten (versions are immutable; export a new one).
"""
import hashlib
import io
import json
import os
import shutil
import tempfile
import time

from .client import NotFound, default_client

FORMAT = "stagd-model"
FORMAT_VERSION = 1
FILES = ("program.sexpr", "signature.json", "variables.npz")


class ScalarSpec:
    """A Python-number input of an exported function: "int" or "float"."""

    def __init__(self, dtype):
        if dtype not in ("int", "float"):
            raise ValueError(f"stagd.export: a scalar input is 'int' or 'float', not {dtype!r}")
        self.dtype = dtype

    def __repr__(self):
        return f"ScalarSpec({self.dtype!r})"


def _spec_of(value):
    """The input spec an example argument stands for; None for a static (baked) value."""
    import numpy as np

    from .function import TensorSpec
    from .tensor import Tensor, Variable
    if isinstance(value, (TensorSpec, ScalarSpec)):
        return value
    if isinstance(value, (Tensor, Variable)):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, np.ndarray):
        return TensorSpec(value.shape, str(value.dtype))
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return ScalarSpec("int")
    if isinstance(value, float):
        return ScalarSpec("float")
    return None


def _spec_json(name, spec):
    from .function import TensorSpec
    if isinstance(spec, TensorSpec):
        shape = None if spec.shape is None else list(spec.shape)
        return {"name": name, "kind": "tensor", "dtype": spec.dtype, "shape": shape}
    return {"name": name, "kind": "scalar", "dtype": spec.dtype}


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def content_hash(files):
    """The manifest's content_hash of {FILE: bytes} (see the module docstring)."""
    lines = "".join(f"{name} {_sha256(files[name])}\n" for name in FILES)
    return "sha256:" + _sha256(lines.encode())


def _trace(fn, args):
    """(ConcreteFunction, input specs, static values, the Function used) for fn traced
    with these example arguments or specs."""
    from .function import Function
    f = fn if isinstance(fn, Function) else Function(fn)
    values = f._bind(args, {})
    specs = [None if name in f.static_argnames else _spec_of(v) for name, v in zip(f.params, values)]
    traced = Function(f.fn, client=f._client, input_signature=specs)
    traced.static_argnames = f.static_argnames
    conc = traced._trace(values, traced._parts(values, check=False))  # examples may be specs
    if conc.segments:
        raise NotImplementedError(
            f"stagd.export: {f.__name__} runs a py_func on staged values; an exported model "
            "runs in the daemon, which does not run Python")
    static = {name: repr(v) for name, v, s in zip(f.params, values, specs) if s is None}
    return conc, specs, static, traced


def _capture_arrays(conc):
    import numpy as np

    from .tensor import Variable
    n_inputs = len(conc.params) - len(conc.captures)
    out, described = {}, []
    for sym, obj in zip(conc.params[n_inputs:], conc.captures):
        arr = np.ascontiguousarray(obj.numpy())
        out[sym] = arr
        described.append({"name": sym, "kind": "variable" if isinstance(obj, Variable) else "tensor",
                          "dtype": str(arr.dtype), "shape": list(arr.shape)})
    return out, described


def _version_of(path):
    base = os.path.basename(os.path.normpath(path))
    return int(base) if base.isdigit() and int(base) > 0 else None


def export(fn, path, *example_args_or_specs):
    """Traces fn (a plain function or a stagd.function) on the example arguments or
    specs (stagd.TensorSpec, ScalarSpec; arrays and tensors stand for their dtype and
    shape, Python numbers for scalars, anything else is static and baked in) and writes
    the model version directory `path` (e.g. "models/affine/1"). Returns path.
    Raises FileExistsError when path exists."""
    import numpy as np
    path = os.fspath(path)
    if os.path.exists(path):
        raise FileExistsError(f"stagd.export: {path} exists; versions are immutable, export "
                              "to a new version directory (models/NAME/VERSION)")
    if _version_of(path) is None:
        raise ValueError(f"stagd.export: {path}: the last part of the path must be a positive "
                         "version number (models/NAME/VERSION, as --models DIR serves them)")
    conc, specs, static, traced = _trace(fn, example_args_or_specs)
    traced._stage(conc)  # the daemon must accept it now, not when serving it
    n_inputs = len(conc.params) - len(conc.captures)
    dynamic = [(name, s) for name, s in zip(traced.params, specs) if s is not None]
    assert len(dynamic) == n_inputs, (dynamic, conc.params)
    arrays, captures = _capture_arrays(conc)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    signature = {"entry": conc.name, "inputs": [_spec_json(n, s) for n, s in dynamic],
                 "captures": captures, "static": static,
                 "returns": "tuple" if conc.arity is not None else "value"}
    files = {"program.sexpr": (conc.program + "\n").encode(),
             "signature.json": (json.dumps(signature, indent=2) + "\n").encode(),
             "variables.npz": buf.getvalue()}
    parent = os.path.dirname(os.path.abspath(path))
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "name": os.path.basename(parent), "version": _version_of(path),
                "entry": conc.name, "stagd_version": traced.client().version().version,
                "python_function": getattr(traced.fn, "__qualname__", traced.__name__),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "files": {name: _sha256(files[name]) for name in FILES},
                "content_hash": content_hash(files)}
    files["manifest.json"] = (json.dumps(manifest, indent=2) + "\n").encode()
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".export-", dir=parent)
    try:
        for name, data in files.items():
            with open(os.path.join(tmp, name), "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o755)
        os.rename(tmp, path)  # atomic: a scanning daemon sees all of it or nothing
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


class LoadedModel:
    """An exported model version, callable in this client's daemon: `model(*inputs)`
    stages its program there (once), gives it its values (Variables made from
    variables.npz, one set per device for this LoadedModel, so its assignments persist
    from call to call as a stagd.function's would) and runs it like a stagd.function."""

    def __init__(self, path, client=None):
        import numpy as np
        self.path = os.fspath(path)
        files = {}
        for name in FILES + ("manifest.json",):
            with open(os.path.join(self.path, name), "rb") as fh:
                files[name] = fh.read()
        self.manifest = json.loads(files["manifest.json"])
        if self.manifest.get("format") != FORMAT or self.manifest.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"stagd.load: {self.path}: not a stagd model of format version "
                             f"{FORMAT_VERSION}")
        got = content_hash(files)
        if got != self.manifest.get("content_hash"):
            raise ValueError(f"stagd.load: {self.path}: content hash {got} does not match the "
                             f"manifest's {self.manifest.get('content_hash')} (changed or damaged "
                             "after export)")
        self.signature = json.loads(files["signature.json"])
        self.program = files["program.sexpr"].decode()
        self.entry = self.signature["entry"]
        with np.load(io.BytesIO(files["variables.npz"])) as data:
            self.arrays = {k: data[k] for k in data.files}
        self._client = client
        self._graph_id = None
        self._values = None

    def client(self):
        if self._client is None:
            self._client = default_client()
        return self._client

    @property
    def inputs(self):
        return self.signature["inputs"]

    def _captures(self, device):
        """The model's values in this model's daemon, on `device` (made once there)."""
        if self._values is None:
            self._values = {}
        if device not in self._values:
            from .tensor import _put_array, _raw_op
            client = self.client()
            values = []
            for c in self.signature["captures"]:
                t = _put_array(client, self.arrays[c["name"]], device)
                values.append(_raw_op(client, device, "variable", t) if c["kind"] == "variable" else t)
            self._values[device] = values
        return self._values[device]

    def _stage(self):
        reply = self.client().call("Stage", {"sexpr": self.program, "entry": self.entry,
                                             "filename": os.path.join(self.path, "program.sexpr")})
        self._graph_id = reply.graph_id
        return self._graph_id

    def __call__(self, *args):
        from .tensor import _arg_values, _wrap, current_device
        if len(args) != len(self.inputs):
            raise TypeError(f"stagd.load: model {self.manifest.get('name')} takes "
                            f"{len(self.inputs)} argument(s) "
                            f"({', '.join(i['name'] for i in self.inputs)}), got {len(args)}")
        client = self.client()
        device = current_device()
        values, keep = _arg_values(client, list(args) + self._captures(device), device)
        req = client.pb2.ExecuteRequest(graph_id=self._graph_id or self._stage(),
                                        return_handles=True, args=values, device=current_device())
        try:
            reply = client.call("Execute", req)
        except NotFound:  # the daemon's cache dropped it (or another replica answered)
            req.graph_id = self._stage()
            reply = client.call("Execute", req)
        if reply.output:
            print(reply.output, end="" if reply.output.endswith("\n") else "\n")
        return _wrap(reply.result, client)

    def __repr__(self):
        return (f"<stagd model {self.manifest.get('name')} version {self.manifest.get('version')} "
                f"({self.entry}, {len(self.inputs)} inputs) at {self.path}>")


def load(path, client=None):
    """The exported model version at path (a directory stagd.export wrote), callable."""
    return LoadedModel(path, client)


def run_model(name, *args, version=0, device="", client=None, timeout=None):
    """Runs the exported model `name` a daemon serves (--models DIR; the highest version
    unless `version` is given) on args (arrays, numbers) and returns the result as NumPy
    arrays / Python values. Retried on UNAVAILABLE (Client.call_retrying): the call
    carries no state of the client's."""
    from .tensor import _arg_values, _wrap
    client = client or default_client()
    values, _keep = _arg_values(client, args, device or "cpu")
    reply = client.call_retrying("RunModel", client.pb2.RunModelRequest(
        name=name, version=version, args=values, device=device, no_result_json=True),
        timeout=timeout)
    return _wrap(reply.result, client)


def run_staged(sexpr, *args, entry="", device="", client=None, timeout=None):
    """Runs a staged program (S-expression text) on args given by value and returns the
    result as NumPy arrays / Python values. The program is staged once per client; a
    daemon that does not have it (another replica, a restart, its cache's eviction)
    answers NOT_FOUND and it is staged there again — programs are content-addressed, so
    every replica gives it the same id — and UNAVAILABLE is retried (docs/deploy.md
    "Replicas")."""
    from .tensor import _arg_values, _wrap
    client = client or default_client()
    key = (sexpr, entry)
    staged = client.__dict__.setdefault("_staged_ids", {})

    def stage():
        staged[key] = client.call_retrying("Stage", {"sexpr": sexpr, "entry": entry},
                                           timeout=timeout).graph_id
        return staged[key]

    values, _keep = _arg_values(client, args, device or "cpu")
    req = client.pb2.ExecuteRequest(graph_id=staged.get(key) or stage(), entry=entry,
                                    args=values, device=device, no_result_json=True)
    try:
        reply = client.call_retrying("Execute", req, timeout=timeout)
    except NotFound as e:
        if "no staged graph" not in str(e):
            raise
        req.graph_id = stage()
        reply = client.call_retrying("Execute", req, timeout=timeout)
    return _wrap(reply.result, client)
