# SPDX-License-Identifier: Apache-2.0
"""test_metrics.py — `stagd --metrics-listen ADDR` (GET /metrics, Prometheus text, every
name prefixed stagd_) and `--log-format json` (docs/daemon.md "Metrics", "Logs"): the
counters move with real requests, `promtool check metrics` accepts the exposition, and a
real Prometheus scraping the daemon on loopback answers a query for its metrics. promtool
and prometheus come from Debian's `prometheus` package (scripts/install-deps.sh).
"""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import grpc
import pytest

import harness

_METRICS = re.compile(r"serving metrics on (http://[^\s\"]+/metrics)")


def _metrics_daemon(start_daemon, *extra, env=None):
    d = start_daemon("--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", *extra, env=env)
    d.metrics_url = d.log.wait_for(_METRICS, harness.START_TIMEOUT, 1)[0].group(1)
    return d


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def _samples(text):
    """{'name{labels}': value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def _call(addr, method, request, reply_cls, metadata=()):
    with grpc.insecure_channel(addr) as ch:
        stub = ch.unary_unary(f"/stagd.v1.Stagd/{method}", request_serializer=type(request).SerializeToString,
                              response_deserializer=reply_cls.FromString)
        return stub(request, timeout=30, metadata=metadata)


def test_metrics_count_requests_by_method_and_code(start_daemon):
    d = _metrics_daemon(start_daemon)
    pb2 = harness.pb2
    for _ in range(3):
        _call(d.addr, "Version", pb2.VersionRequest(), pb2.VersionReply)
    with pytest.raises(grpc.RpcError) as e:
        _call(d.addr, "Execute", pb2.ExecuteRequest(graph_id="g0000000000000000"), pb2.ExecuteReply)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    staged = _call(d.addr, "Stage", pb2.StageRequest(sexpr="(def f (x) (+ x 1))"), pb2.StageReply)
    _call(d.addr, "Stage", pb2.StageRequest(sexpr="(def f (x) (+ x 1))"), pb2.StageReply)  # cached
    _call(d.addr, "Execute", pb2.ExecuteRequest(graph_id=staged.graph_id, args_json="[41]"), pb2.ExecuteReply)
    status, ctype, text = _get(d.metrics_url)
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4")
    s = _samples(text)
    assert all(k.startswith("stagd_") for k in s), [k for k in s if not k.startswith("stagd_")][:5]
    assert s['stagd_requests_total{method="Version",code="OK"}'] == 3
    assert s['stagd_requests_total{method="Execute",code="NOT_FOUND"}'] == 1
    assert s['stagd_requests_total{method="Execute",code="OK"}'] == 1
    assert s['stagd_request_duration_seconds_count{method="Version"}'] == 3
    assert s['stagd_request_duration_seconds_bucket{method="Version",le="+Inf"}'] == 3
    assert s['stagd_request_duration_seconds_sum{method="Version"}'] > 0
    assert s["stagd_graph_cache_programs"] == 1
    assert s["stagd_graph_cache_hits_total"] == 2  # the second Stage, the Execute's lookup
    assert s["stagd_graph_cache_misses_total"] == 2  # the first Stage, the unknown id
    assert s["stagd_requests_in_flight"] == 0
    assert s["stagd_process_resident_memory_bytes"] > 1 << 20
    assert s['stagd_build_info{version="%s",build="%s"}' % (
        re.search(r'"version": "([^"]+)"', subprocess.run(
            [harness.stagctl_bin(), "--addr", d.addr, "version"], capture_output=True,
            text=True).stdout).group(1), re.search(r'build="([^"]+)"', text).group(1))] == 1


def test_metrics_count_handles_sessions_and_vulkan_traffic(start_daemon):
    d = _metrics_daemon(start_daemon)
    pb2 = harness.pb2
    md = (("stagd-session", "metrics-test"),)
    t = pb2.Value(tensor=pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[256], data=bytes(1024)))
    _call(d.addr, "Put", pb2.PutRequest(value=t, device="cpu"), pb2.PutReply, md)
    _call(d.addr, "Put", pb2.PutRequest(value=t, device="vulkan:0"), pb2.PutReply, md)
    s = _samples(_get(d.metrics_url)[2])
    assert s['stagd_handles{device="cpu"}'] == 1 and s['stagd_handle_bytes{device="cpu"}'] == 1024
    assert s['stagd_handles{device="vulkan:0"}'] == 1
    assert s["stagd_sessions"] == 1
    assert s["stagd_vulkan_uploads_total"] >= 1 and s["stagd_vulkan_upload_bytes_total"] >= 1024
    assert s["stagd_vulkan_resident_bytes"] >= 1024
    # a staged run on the device: submissions, dispatches, a download; an error that only
    # the CPU kernel reports (max of an empty tensor) is a CPU fallback
    staged = _call(d.addr, "Stage", pb2.StageRequest(sexpr="(def f (a) (max a))"), pb2.StageReply)
    reply = _call(d.addr, "Execute", pb2.ExecuteRequest(graph_id=staged.graph_id, args_json="[[1.0, 3.0, 2.0]]",
                                                        device="vulkan:0"), pb2.ExecuteReply)
    assert json.loads(reply.result_json)["data"] == [3.0]
    with pytest.raises(grpc.RpcError) as e:
        empty = pb2.Value(tensor=pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[0], data=b""))
        _call(d.addr, "Execute", pb2.ExecuteRequest(graph_id=staged.graph_id, args=[empty], device="vulkan:0"),
              pb2.ExecuteReply)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    after = _samples(_get(d.metrics_url)[2])
    assert after["stagd_vulkan_requests_total"] >= s["stagd_vulkan_requests_total"] + 2
    assert after["stagd_vulkan_submissions_total"] > s["stagd_vulkan_submissions_total"]
    assert after["stagd_vulkan_dispatches_total"] > s["stagd_vulkan_dispatches_total"]
    assert after["stagd_vulkan_downloads_total"] > s["stagd_vulkan_downloads_total"]
    assert after["stagd_cpu_fallbacks_total"] == s["stagd_cpu_fallbacks_total"] + 1
    assert after['stagd_requests_total{method="Execute",code="INVALID_ARGUMENT"}'] == 1
    # an elementwise chain runs as one pass: one generated kernel on the device, one loop
    # on the CPU; each is counted where it ran
    chain = _call(d.addr, "Stage", pb2.StageRequest(sexpr="(def g (a) (sqrt (+ (* a a) 1.0)))"),
                  pb2.StageReply)
    for device in ("vulkan:0", "cpu"):
        reply = _call(d.addr, "Execute", pb2.ExecuteRequest(graph_id=chain.graph_id, args_json="[[3.0, 0.0]]",
                                                            device=device), pb2.ExecuteReply)
        assert json.loads(reply.result_json)["data"] == [struct.unpack("f", struct.pack("f", 10.0 ** 0.5))[0], 1.0]
    fused = _samples(_get(d.metrics_url)[2])
    assert fused["stagd_vulkan_fused_chains_total"] == after["stagd_vulkan_fused_chains_total"] + 1
    assert fused["stagd_fused_chains_total"] == after["stagd_fused_chains_total"] + 1
    # a resident argument (a handle on the device) is borrowed by the fused kernel too
    three = pb2.Value(tensor=pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=[2], data=struct.pack("2f", 3.0, 0.0)))
    h = _call(d.addr, "Put", pb2.PutRequest(value=three, device="vulkan:0"), pb2.PutReply, md).result
    reply = _call(d.addr, "Execute", pb2.ExecuteRequest(graph_id=chain.graph_id, args=[h], device="vulkan:0"),
                  pb2.ExecuteReply, md)
    assert json.loads(reply.result_json)["data"] == [struct.unpack("f", struct.pack("f", 10.0 ** 0.5))[0], 1.0]
    resident = _samples(_get(d.metrics_url)[2])
    assert resident["stagd_vulkan_fused_chains_total"] == fused["stagd_vulkan_fused_chains_total"] + 1
    # a dense layer: on the device the bias and relu run in the matmul's kernel (its
    # epilogue; the weight resident, borrowed), on the CPU over the product's own tensor
    dense = _call(d.addr, "Stage", pb2.StageRequest(sexpr="(def h (x w b) (relu (+ (matmul x w) b)))"),
                  pb2.StageReply)

    def f32(shape, *vals):
        return pb2.Value(tensor=pb2.Tensor(dtype=pb2.DTYPE_FLOAT32, shape=shape, data=struct.pack(f"{len(vals)}f", *vals)))
    x, w, b = f32([1, 2], 1.0, 2.0), f32([2, 2], 1.0, -1.0, 0.5, 2.0), f32([2], -3.0, 0.5)
    wh = _call(d.addr, "Put", pb2.PutRequest(value=w, device="vulkan:0"), pb2.PutReply, md).result
    for device, weight in (("vulkan:0", wh), ("cpu", w)):
        reply = _call(d.addr, "Execute", pb2.ExecuteRequest(graph_id=dense.graph_id, args=[x, weight, b],
                                                            device=device), pb2.ExecuteReply, md)
        assert json.loads(reply.result_json) == {"dtype": "float32", "shape": [1, 2], "data": [0.0, 3.5]}
    epi = _samples(_get(d.metrics_url)[2])
    assert epi["stagd_vulkan_epilogues_total"] == resident["stagd_vulkan_epilogues_total"] + 1
    assert epi["stagd_vulkan_fused_chains_total"] == resident["stagd_vulkan_fused_chains_total"] + 1
    assert epi["stagd_fused_in_place_total"] == resident["stagd_fused_in_place_total"] + 1


def test_metrics_endpoint_answers_only_get_metrics(start_daemon):
    d = _metrics_daemon(start_daemon)
    base = d.metrics_url[: -len("/metrics")]
    with pytest.raises(urllib.error.HTTPError) as e:
        _get(base + "/")
    assert e.value.code == 404
    req = urllib.request.Request(d.metrics_url, data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 405 and e.value.headers.get("Allow") == "GET, HEAD"


@pytest.mark.parametrize("addr, message", [
    ("nohost", "expects host:port"),
    ("127.0.0.1:http", "is not a number"),
    ("256.1.1.1:9", "--metrics-listen 256.1.1.1:9"),
])
def test_bad_metrics_address_is_a_startup_error(addr, message):
    res = subprocess.run([harness.stagd_bin(), "--listen", "127.0.0.1:0", "--metrics-listen", addr],
                         capture_output=True, text=True, env=harness.base_env(), timeout=30)
    assert res.returncode == 2 and message in res.stderr, res.stderr


def test_metrics_port_in_use_is_a_startup_error(start_daemon):
    d = _metrics_daemon(start_daemon)
    taken = d.metrics_url.split("//")[1].split("/")[0]
    res = subprocess.run([harness.stagd_bin(), "--listen", "127.0.0.1:0", "--metrics-listen", taken],
                         capture_output=True, text=True, env=harness.base_env(), timeout=30)
    assert res.returncode == 2 and "cannot listen there" in res.stderr, res.stderr


def _need(tool):
    path = shutil.which(tool) or (f"/usr/bin/{tool}" if os.access(f"/usr/bin/{tool}", os.X_OK) else None)
    if not path:
        print(f"SKIPPED: {tool} is not installed (Debian package prometheus; scripts/install-deps.sh)")
        pytest.skip(f"{tool} is not installed (apt-get install prometheus)")
    return path


def test_promtool_accepts_the_exposition(start_daemon, tmp_path):
    promtool = _need("promtool")
    d = _metrics_daemon(start_daemon)
    pb2 = harness.pb2
    _call(d.addr, "Version", pb2.VersionRequest(), pb2.VersionReply)
    text = _get(d.metrics_url)[2]
    res = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_real_prometheus_scrapes_the_daemon(start_daemon, tmp_path):
    prometheus = _need("prometheus")
    d = _metrics_daemon(start_daemon)
    pb2 = harness.pb2
    for _ in range(5):
        _call(d.addr, "Version", pb2.VersionRequest(), pb2.VersionReply)
    target = d.metrics_url.split("//")[1].split("/")[0]
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: stagd\n    static_configs:\n"
        f"      - targets: ['{target}']\n")
    port = _free_port()
    proc = subprocess.Popen([prometheus, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log = harness._LineLog(proc.stderr)
    try:
        query = urllib.parse.quote('stagd_requests_total{method="Version",code="OK"}')
        deadline, result = time.monotonic() + 60, None
        while time.monotonic() < deadline and not result:
            try:
                body = json.loads(_get(f"http://127.0.0.1:{port}/api/v1/query?query={query}")[2])
                result = body["data"]["result"]
            except (urllib.error.URLError, ConnectionError, KeyError):
                pass
            if not result:
                assert proc.poll() is None, f"prometheus exited {proc.returncode}:\n{log.text()}"
                time.sleep(0.5)
        assert result, f"prometheus never had the metric; its log:\n{log.text()}"
        assert result[0]["metric"]["job"] == "stagd" and float(result[0]["value"][1]) == 5
        up = json.loads(_get(f"http://127.0.0.1:{port}/api/v1/query?query=up")[2])["data"]["result"]
        assert up and up[0]["value"][1] == "1"
    finally:
        proc.terminate()
        proc.wait(30)


def test_json_logs_are_one_object_per_line(start_daemon):
    d = start_daemon("--listen", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug")
    pb2 = harness.pb2
    md = (("stagd-session", "log-test"),)
    _call(d.addr, "Version", pb2.VersionRequest(), pb2.VersionReply, md)
    with pytest.raises(grpc.RpcError):
        _call(d.addr, "Execute", pb2.ExecuteRequest(graph_id="gbad"), pb2.ExecuteReply, md)
    d.terminate()
    lines = [ln for ln in d.log.lines if ln.startswith("{")]
    records = [json.loads(ln) for ln in lines]
    assert records and all({"time", "level", "message"} <= set(r) for r in records)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["time"]) for r in records)
    version = [r for r in records if r.get("method") == "Version"]
    assert version and version[0]["status"] == "OK" and version[0]["session"] == "log-test"
    assert version[0]["level"] == "debug" and version[0]["duration_ms"] >= 0
    failed = [r for r in records if r.get("method") == "Execute"]
    assert failed[0]["status"] == "NOT_FOUND" and failed[0]["level"] == "info"
    assert "no staged graph with id 'gbad'" in failed[0]["message"]
    assert any(r["message"].startswith("serving gRPC on ") for r in records)
    # every line of stderr is JSON (no text line slipped through), the loader's aside
    assert [ln for ln in d.log.lines if ln.strip() and not ln.startswith("{")
            and "XDG_RUNTIME_DIR" not in ln] == []


def test_bad_log_format_is_a_startup_error():
    res = subprocess.run([harness.stagd_bin(), "--log-format", "yaml"], capture_output=True, text=True,
                         env=harness.base_env(), timeout=30)
    assert res.returncode == 2 and "--log-format: log-format expects text or json, got 'yaml'" in res.stderr


def test_metrics_need_the_bearer_token_when_the_daemon_has_tokens(start_daemon, tmp_path):
    token = "m" * 40
    (tmp_path / "tokens").write_text(token + "\n")
    d = _metrics_daemon(start_daemon, "--auth-token-file", str(tmp_path / "tokens"))
    for headers in ({}, {"Authorization": "Bearer " + "x" * 40}, {"Authorization": token}):
        for url in (d.metrics_url, d.metrics_url.replace("/metrics", "/other")):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10)
            assert e.value.code == 401 and e.value.headers.get("WWW-Authenticate") == 'Bearer realm="stagd"'
            assert "--auth-token-file" in e.value.read().decode()
    req = urllib.request.Request(d.metrics_url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200 and "stagd_build_info" in r.read().decode()


def test_metrics_on_the_network_need_tokens_or_insecure(start_daemon):
    res = subprocess.run([harness.stagd_bin(), "--listen", "127.0.0.1:0", "--metrics-listen", "0.0.0.0:0"],
                         capture_output=True, text=True, env=harness.base_env(), timeout=30)
    assert res.returncode == 2, res.stderr
    assert "--metrics-listen 0.0.0.0:0 is reachable from other machines" in res.stderr
    assert "--auth-token-file" in res.stderr and "--insecure" in res.stderr
    d = start_daemon("--listen", "127.0.0.1:0", "--metrics-listen", "0.0.0.0:0", "--insecure")
    d.log.wait_for(re.compile(r"metrics on 0\.0\.0\.0:0 are served to the network without tokens"),
                   harness.START_TIMEOUT, 1)
    assert "served to the network without tokens" in d.log.text()
