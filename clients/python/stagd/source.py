# SPDX-License-Identifier: Apache-2.0
"""source.py — `stagd.stage_source(src, entry)`: Python source staged in the daemon
itself (docs/pyfront.md), no client-side tracing: the daemon parses the module, lowers
the entry function and what it calls to its graph IR, and answers a graph id.

    prog = stagd.stage_source(open("model.py").read(), "loss", filename="model.py")
    prog(w, x, y)                   # Execute: Python numbers, tuples, NumPy arrays in and out
    prog.dump("text")               # the graph, located in model.py
    dloss = prog.grad(wrt=0)        # the gradient program (Grad RPC), callable the same way

Values cross as ARCHITECTURE.md's JSON values: a Python int is an int64, a float a
float64, a NumPy array keeps its dtype, a tuple is a tuple; results come back the same
way (tensors as NumPy arrays).
"""
import json

_FORMATS = {"sexpr": 1, "text": 2, "dot": 3, "json": 4}


def _to_json(v):
    import numpy as np
    if isinstance(v, (bool, int, float)) or v is None:
        return v
    if isinstance(v, tuple):
        return {"tuple": [_to_json(x) for x in v]}
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.ravel().tolist()}
    raise TypeError(f"stagd.stage_source: cannot pass a {type(v).__name__} (numbers, bools, None, tuples "
                    "and NumPy arrays only)")


def _from_json(j):
    import numpy as np
    if isinstance(j, str) and j in ("nan", "inf", "-inf"):
        return float(j)
    if isinstance(j, dict) and "tuple" in j:
        return tuple(_from_json(x) for x in j["tuple"])
    if isinstance(j, dict) and "record" in j:
        return {k: _from_json(x) for k, x in j["record"].items()}
    if isinstance(j, dict) and "dtype" in j:
        data = [float(x) if isinstance(x, str) else x for x in j["data"]]
        return np.array(data, dtype=j["dtype"]).reshape(j["shape"])
    return j


class StagedSource:
    """A program the daemon staged from Python source (or its gradient)."""

    def __init__(self, client, graph_id, entry):
        self.client = client
        self.graph_id = graph_id
        self.entry = entry

    def __call__(self, *args, device=""):
        req = self.client.pb2.ExecuteRequest(graph_id=self.graph_id, device=device,
                                             args_json=json.dumps([_to_json(a) for a in args]))
        return _from_json(json.loads(self.client.call("Execute", req).result_json))

    def dump(self, format="text"):
        req = self.client.pb2.DumpGraphRequest(graph_id=self.graph_id, format=_FORMATS[format])
        return self.client.call("DumpGraph", req).text

    def grad(self, wrt=None):
        """The gradient program w.r.t. parameter `wrt` (an index or a sequence of them;
        None: all parameters, a tuple of gradients)."""
        wrt = [] if wrt is None else [wrt] if isinstance(wrt, int) else list(wrt)
        req = self.client.pb2.GradRequest(graph_id=self.graph_id, entry=self.entry, wrt=wrt)
        return StagedSource(self.client, self.client.call("Grad", req).graph_id, None)

    def __repr__(self):
        return f"<stagd.StagedSource {self.entry or 'gradient'} {self.graph_id}>"


def stage_source(src, entry=None, filename="<python>", client=None, no_optimize=False):
    """Stages function `entry` (None: the module's last def) of the Python module `src`
    in the daemon; errors are located in `filename` (a construct outside the subset is
    an InvalidArgument with reason 'unsupported')."""
    if client is None:
        from .client import default_client
        client = default_client()
    pb2 = client.pb2
    req = pb2.StageRequest(source=src, filename=filename, entry=entry or "", no_optimize=no_optimize,
                           language=pb2.SOURCE_LANGUAGE_PYTHON)
    reply = client.call("Stage", req)
    return StagedSource(client, reply.graph_id, entry)
