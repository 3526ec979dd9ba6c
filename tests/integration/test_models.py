# SPDX-License-Identifier: Apache-2.0
"""test_models.py — exported models served by name (docs/deploy.md "Models"): a client
exports staged functions with Variables (stagd.export), another daemon started with
--models DIR serves them (RunModel, ListModels) to other clients — stagctl run-model and
the Python client — on cpu and vulkan:0 with results equal to NumPy's; a new version
is picked up while serving and a removed one goes; a damaged version is refused with a
logged error while the others serve; concurrent calls are independent; stagd.load runs
an export in any daemon; every bad request gets a clear error.
"""
import io
import json
import re
import shutil
import subprocess
import threading
import time
import zipfile

import numpy as np
import pytest

import harness
import stagd

W1 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
B1 = np.array([0.5, -0.5], np.float32)
X = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 1.0]], np.float32)


def _affine(w, b):
    wv = stagd.Variable(w)
    bt = stagd.constant(b)

    def affine(x):
        return stagd.matmul(x, wv) + bt
    return stagd.function(affine)


def _counter():
    count = stagd.Variable(np.array(10, np.int64))

    def step(n):
        count.assign_add(n)
        return count.read_value()
    return stagd.function(step)


@pytest.fixture(scope="module")
def exporter(daemon):
    """A client of the module's daemon, the default while exporting."""
    c = stagd.Client(daemon.addr)
    previous = stagd._default_client
    stagd.set_default_client(c)
    yield c
    stagd.set_default_client(previous)


@pytest.fixture(scope="module")
def models_dir(exporter, tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    stagd.export(_affine(W1, B1), root / "affine/1", stagd.TensorSpec((None, 3), "float32"))
    stagd.export(_counter(), root / "counter/1", 1)
    return root


@pytest.fixture
def server(start_daemon, models_dir):
    return start_daemon("--listen", "127.0.0.1:0", "--models", str(models_dir), "--models-poll-ms", "100")


def _run_model(addr, *args, check=True):
    res = subprocess.run([harness.stagctl_bin(), "--addr", addr, "run-model", *args],
                         capture_output=True, text=True, timeout=60)
    if check:
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)
    return res


def _tensor(j):
    return np.array(j["data"], dtype=j["dtype"]).reshape(j["shape"])


def test_export_writes_a_versioned_directory(models_dir):
    d = models_dir / "affine/1"
    assert sorted(p.name for p in d.iterdir()) == ["manifest.json", "program.sexpr", "signature.json",
                                                    "variables.npz"]
    manifest = json.loads((d / "manifest.json").read_text())
    assert manifest["format"] == "stagd-model" and manifest["format_version"] == 1
    assert manifest["name"] == "affine" and manifest["version"] == 1
    assert manifest["stagd_version"] == stagd.version().version
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", manifest["content_hash"])
    sig = json.loads((d / "signature.json").read_text())
    assert sig["inputs"] == [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [None, 3]}]
    assert [c["kind"] for c in sig["captures"]] == ["variable", "tensor"]
    with np.load(d / "variables.npz") as z:
        values = [z[c["name"]] for c in sig["captures"]]
    np.testing.assert_array_equal(values[0], W1)
    np.testing.assert_array_equal(values[1], B1)
    assert (d / "program.sexpr").read_text().startswith(f"(def {sig['entry']} (x ")


def test_export_refuses_to_overwrite_and_needs_a_version(exporter, models_dir):
    with pytest.raises(FileExistsError, match="versions are immutable"):
        stagd.export(_affine(W1, B1), models_dir / "affine/1", stagd.TensorSpec((None, 3)))
    with pytest.raises(ValueError, match="positive version number"):
        stagd.export(_affine(W1, B1), models_dir / "affine/latest", stagd.TensorSpec((None, 3)))


@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
def test_served_model_runs_from_stagctl(server, device):
    got = _run_model(server.addr, "affine", "--device", device, "--args", json.dumps([X.tolist()]))
    np.testing.assert_allclose(_tensor(got), X @ W1 + B1, rtol=1e-6)
    assert got["dtype"] == "float32"


@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
def test_served_model_runs_from_the_python_client(server, device):
    c = stagd.Client(server.addr)
    out = stagd.run_model("affine", X, device=device, client=c)
    np.testing.assert_allclose(out, X @ W1 + B1, rtol=1e-6)
    # a model that assigns to its variable: every call starts from the exported value
    assert stagd.run_model("counter", 5, device=device, client=c) == 15
    assert stagd.run_model("counter", 5, device=device, client=c) == 15
    c.close()


def test_list_models(server, models_dir):
    c = stagd.Client(server.addr)
    reply = c.list_models()
    assert reply.models_dir == str(models_dir)
    assert [m.name for m in reply.models] == ["affine", "counter"]
    v = reply.models[0].versions[0]
    assert v.version == 1 and v.variables == 2 and v.variable_bytes == W1.nbytes + B1.nbytes
    assert [(i.name, i.dtype, list(i.shape)) for i in v.inputs] == [("x", "float32", [-1, 3])]
    assert v.content_hash.startswith("sha256:") and v.graph_id.startswith("g")
    c.close()


def test_concurrent_calls_are_independent(server):
    c = stagd.Client(server.addr)
    errors, results = [], []

    def work(k):
        try:
            for i in range(15):
                results.append((k + i, stagd.run_model("counter", k + i, client=c)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(results) == 90 and all(out == 10 + n for n, out in results)
    c.close()


def test_new_version_is_picked_up_while_serving(exporter, server, models_dir, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(models_dir / "affine", root / "affine")
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--models", str(root), "--models-poll-ms", "100"])
    try:
        w2 = W1 * 2
        stagd.export(_affine(w2, B1), root / "affine/2", stagd.TensorSpec((None, 3), "float32"))
        d.log.wait_for(re.compile(r"model affine version 2 loaded"), 30)
        latest = _run_model(d.addr, "affine", "--args", json.dumps([X.tolist()]))
        np.testing.assert_allclose(_tensor(latest), X @ w2 + B1, rtol=1e-6)
        first = _run_model(d.addr, "affine", "--version", "1", "--args", json.dumps([X.tolist()]))
        np.testing.assert_allclose(_tensor(first), X @ W1 + B1, rtol=1e-6)
        # a third version, then removed: the highest left (2) answers, never an older one
        stagd.export(_affine(W1 * 3, B1), root / "affine/3", stagd.TensorSpec((None, 3), "float32"))
        d.log.wait_for(re.compile(r"model affine version 3 loaded"), 30)
        shutil.rmtree(root / "affine/3")
        d.log.wait_for(re.compile(r"model affine version 3 removed"), 30)
        latest = _run_model(d.addr, "affine", "--args", json.dumps([X.tolist()]))
        np.testing.assert_allclose(_tensor(latest), X @ w2 + B1, rtol=1e-6)
        listed = subprocess.run([harness.stagctl_bin(), "--addr", d.addr, "models"], capture_output=True,
                                text=True, timeout=60)
        assert listed.returncode == 0, listed.stderr
        models = json.loads(listed.stdout)["models"]
        assert [(m["name"], [v["version"] for v in m["versions"]]) for m in models] == [("affine", ["2", "1"])]
        shutil.rmtree(root / "affine/2")
        d.log.wait_for(re.compile(r"model affine version 2 removed"), 30)
        res = _run_model(d.addr, "affine", "--version", "2", "--args", "[]", check=False)
        assert res.returncode == 1 and "model 'affine' has no version 2 (loaded: 1)" in res.stderr
    finally:
        assert d.terminate() == 0


def test_damaged_version_is_refused_and_the_rest_serve(exporter, models_dir, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(models_dir, root)
    sexpr = root / "counter/1/program.sexpr"
    sexpr.write_text(sexpr.read_text().replace("assign_add", "assign"))
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--models", str(root)])
    try:
        assert d.log.wait_for(re.compile(r"model counter version 1 not loaded: .*content hash"), 10)
        res = _run_model(d.addr, "counter", "--args", "[1]", check=False)
        assert res.returncode == 1 and "no model named 'counter'" in res.stderr
        got = _run_model(d.addr, "affine", "--args", json.dumps([X.tolist()]))
        np.testing.assert_allclose(_tensor(got), X @ W1 + B1, rtol=1e-6)
    finally:
        assert d.terminate() == 0


@pytest.mark.parametrize("args, message", [
    (["nope", "--args", "[]"], "no model named 'nope' in "),
    (["affine", "--version", "7", "--args", "[]"], "model 'affine' has no version 7 (loaded: 1)"),
    (["affine", "--args", "[]"], "takes 1 argument, got 0"),
    (["affine", "--args", "[[[1, 2, 3]]]"], "argument 0 (x) must be float32 [?,3], got int64 tensor"),
    (["affine", "--args", "[[[1.0, 2]]]"], "must be float32 [?,3], got float32 tensor of shape (1, 2)"),
    (["counter", "--args", "[1.5]"], "argument 0 (n) must be an int scalar"),
    (["affine", "--args", "[[1.0"], "argument"),
    (["affine", "--device", "vulkan:9", "--args", json.dumps([X.tolist()])], "vulkan:9"),
])
def test_bad_requests_get_clear_errors(server, args, message):
    res = _run_model(server.addr, *args, check=False)
    assert res.returncode == 1 and message in res.stderr, res.stderr
    assert stagd.Client(server.addr).health() == "SERVING"


def test_a_daemon_without_models_says_so(daemon):
    res = _run_model(daemon.addr, "affine", "--args", "[]", check=False)
    assert res.returncode == 1 and "this daemon serves no models (start it with --models DIR)" in res.stderr


def test_models_dir_must_exist(tmp_path):
    res = subprocess.run([harness.stagd_bin(), "--models", str(tmp_path / "none")], capture_output=True,
                         text=True, env=harness.base_env(), timeout=30)
    assert res.returncode == 2 and "not a directory" in res.stderr


def test_load_runs_an_export_in_another_daemon(models_dir, fresh_daemon):
    c = stagd.Client(fresh_daemon.addr)
    model = stagd.load(models_dir / "affine/1", client=c)
    np.testing.assert_allclose(model(X).numpy(), X @ W1 + B1, rtol=1e-6)
    with pytest.raises(TypeError, match="takes 1 argument"):
        model(X, X)
    c.close()


def test_load_refuses_a_changed_export(models_dir, tmp_path):
    shutil.copytree(models_dir / "affine/1", tmp_path / "1")
    (tmp_path / "1/signature.json").write_text((tmp_path / "1/signature.json").read_text() + " ")
    with pytest.raises(ValueError, match="content hash .* does not match"):
        stagd.load(tmp_path / "1")


def test_metrics_count_models(start_daemon, models_dir):
    d = start_daemon("--listen", "127.0.0.1:0", "--models", str(models_dir), "--metrics-listen", "127.0.0.1:0")
    url = d.log.wait_for(re.compile(r"serving metrics on (http://\S+/metrics)"), 10)[0].group(1)
    import urllib.request
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    assert "\nstagd_models 2\n" in text and "\nstagd_model_versions 2\n" in text
    assert "\nstagd_model_loads_total 2\n" in text and "\nstagd_model_load_errors_total 0\n" in text


def _rehash(version_dir):
    """Rewrites manifest.json's hashes for the files as they are now (a crafted export)."""
    from stagd import exported
    files = {name: (version_dir / name).read_bytes() for name in exported.FILES}
    manifest = json.loads((version_dir / "manifest.json").read_text())
    manifest["content_hash"] = exported.content_hash(files)
    (version_dir / "manifest.json").write_text(json.dumps(manifest))


def _npy_bytes(header, data):
    """An .npy member written by hand (version 1.0): what a damaged or crafted file holds."""
    h = header.encode()
    h += b" " * (-(len(h) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data


@pytest.mark.parametrize("array, message", [
    (np.asfortranarray(W1), "Fortran-ordered arrays are not read"),
    (W1.astype(np.complex64), "dtype is not one of bool, int32, int64, float16, float32, float64"),
    (W1[:2], "must be float32 [3,2] as signature.json says, got float32 [2,2]"),
    (_npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (134217728, 2), }", W1.tobytes()),
     "data size does not match the header's dtype and shape"),
    (_npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", W1.tobytes()[:-4]),
     "data size does not match the header's dtype and shape"),
    (_npy_bytes("{'descr': '<f4', 'shape': (3, 2), }", W1.tobytes()),
     "an .npy header without descr, fortran_order and shape"),
    (b"\x93NUMPY\x01\x00\xff\x00{'descr'", "truncated .npy header"),
])
def test_bad_variables_are_refused_with_the_reason(models_dir, tmp_path, array, message):
    root = tmp_path / "models"
    shutil.copytree(models_dir / "affine", root / "affine")
    v = root / "affine/1"
    sig = json.loads((v / "signature.json").read_text())
    with np.load(v / "variables.npz") as z:
        arrays = {k: z[k] for k in z.files}
    name = sig["captures"][0]["name"]
    if isinstance(array, bytes):  # raw .npy bytes, stored as that member
        with zipfile.ZipFile(v / "variables.npz", "w") as zf:
            for k, a in arrays.items():
                if k != name:
                    buf = io.BytesIO()
                    np.save(buf, a)
                    zf.writestr(k + ".npy", buf.getvalue())
            zf.writestr(name + ".npy", array)
    else:
        arrays[name] = array
        with open(v / "variables.npz", "wb") as fh:
            np.savez(fh, **arrays)
    _rehash(v)
    d = harness.Daemon(["--listen", "127.0.0.1:0", "--models", str(root)])
    try:
        found = d.log.wait_for(re.compile(r"model affine version 1 not loaded: (.*)"), 10)
        assert found and message in found[0].group(1), d.log.text()
        res = _run_model(d.addr, "affine", "--args", json.dumps([X.tolist()]), check=False)
        assert res.returncode == 1 and "no model named 'affine'" in res.stderr
    finally:
        assert d.terminate() == 0
