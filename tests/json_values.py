# SPDX-License-Identifier: Apache-2.0
"""json_values.py — NumPy values as the JSON values of ARCHITECTURE.md "JSON values" and
back, for the tests that drive gr_tool or Execute with JSON arguments: tensors as
{"dtype", "shape", "data"} with non-finite floats as the strings "nan", "inf", "-inf",
tuples as {"tuple": [...]}, NumPy scalars as 0-d tensors, anything else as it is.
Test scripts in tests/*/ put tests/ on sys.path to import it."""
import numpy as np


def enc(x):
    """NumPy array / scalar, tuple of them, or a plain JSON value → JSON argument value."""
    if isinstance(x, np.generic):
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        data = [d if isinstance(d, (bool, int)) or np.isfinite(d) else str(d)
                for d in x.reshape(-1).tolist()]
        return {"dtype": str(x.dtype), "shape": list(x.shape), "data": data}
    if isinstance(x, tuple):
        return {"tuple": [enc(e) for e in x]}
    return x


def dec(v):
    """JSON result value → NumPy array (tuples → tuples; other values as they are)."""
    if isinstance(v, dict) and "dtype" in v:
        data = [float(d) if isinstance(d, str) else d for d in v["data"]]
        return np.array(data, dtype=v["dtype"]).reshape(v["shape"])
    if isinstance(v, dict) and "tuple" in v:
        return tuple(dec(e) for e in v["tuple"])
    return v
