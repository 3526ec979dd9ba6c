# SPDX-License-Identifier: Apache-2.0
"""test_stagctl.py — the stagctl command line against the real daemon and --local:
JSON output, exit codes and messages."""
import json
import subprocess

import pytest

import harness


def stagctl(*args, env=None, timeout=20):
    return subprocess.run([harness.stagctl_bin(), *args], capture_output=True, text=True,
                          env=env or harness.base_env(), timeout=timeout, stdin=subprocess.DEVNULL)


def ok_json(r):
    assert r.returncode == 0, f"exit {r.returncode}; stderr: {r.stderr}"
    return json.loads(r.stdout)


def test_local_version(stagctl_bin):
    v = ok_json(stagctl("--local", "version"))
    assert v["api"] == "stagd.v1" and v["version"]


def test_local_devices(stagctl_bin):
    d = ok_json(stagctl("--local", "devices"))
    assert "cpu" in [x["name"] for x in d["devices"]]


def test_no_device_start_up_where_none_is_needed(stagctl_bin, tmp_path):
    # Devices start on first use (docs/daemon.md): parse, convert, unparse, version and
    # health create no Vulkan instance. VK_LOADER_DEBUG makes the loader report itself
    # on stderr as soon as anything initializes it; `devices` shows the check can fail.
    src = tmp_path / "small.py"
    src.write_text("def f(x):\n    return x + 1\n")
    env = dict(harness.base_env(), VK_LOADER_DEBUG="all")
    for args in (["parse", str(src)], ["unparse", str(src)], ["convert", str(src)],
                 ["version"], ["health"]):
        r = stagctl("--local", *args, env=env)
        assert r.returncode == 0, (args, r.stderr)
        assert "Vulkan Loader" not in r.stderr and "LAYER:" not in r.stderr, (args, r.stderr[:300])
    r = stagctl("--local", "devices", env=env)
    assert r.returncode == 0, r.stderr
    if any(x["backend"] == "vulkan" for x in json.loads(r.stdout)["devices"]):
        assert "Vulkan Loader" in r.stderr or "LAYER:" in r.stderr, r.stderr[:300]


def test_devices_matmul_variants(stagctl_bin):
    # Each Vulkan device lists its matmul variants and the float32 kernel choice;
    # STAGD_VK_MATMUL in the environment changes the choice (docs/vulkan.md).
    vk = [x for x in ok_json(stagctl("--local", "devices"))["devices"] if x["backend"] == "vulkan"]
    for x in vk:
        assert "tiled" in x["matmulVariants"], x
        assert x["matmulKernel"] and x["matmulReason"], x
        if x["description"].startswith("llvmpipe"):  # lavapipe: subgroups, no coop
            assert x["matmulVariants"] == ["tiled", "subgroup", "blocked"], x
            assert x["matmulKernel"] == "matmul_blocked", x  # a large float32 product
            assert x["float16"] and not x.get("cooperativeMatrix"), x
    forced = ok_json(stagctl("--local", "devices",
                             env=harness.base_env(STAGD_VK_MATMUL="subgroup")))["devices"]
    for x in forced:
        if x["backend"] == "vulkan" and "subgroup" in x["matmulVariants"]:
            assert x["matmulKernel"] == "matmul_subgroup", x
            assert "forced" in x["matmulReason"], x


def test_addr_version_matches_local(stagctl_bin, daemon):
    remote = ok_json(stagctl("--addr", daemon.addr, "version"))
    local = ok_json(stagctl("--local", "version"))
    assert remote["api"] == "stagd.v1"
    assert remote["version"] == local["version"]


def test_addr_health(stagctl_bin, daemon):
    assert ok_json(stagctl("--addr", daemon.addr, "health")) == {"status": "SERVING"}


def test_addr_devices(stagctl_bin, daemon):
    d = ok_json(stagctl("--addr", daemon.addr, "devices"))
    cpu = [x for x in d["devices"] if x["name"] == "cpu"]
    assert cpu and cpu[0]["backend"] == "cpu", d


def test_addr_from_env(stagctl_bin, daemon):
    v = ok_json(stagctl("version", env=harness.base_env(STAGD_ADDR=daemon.addr)))
    assert v["api"] == "stagd.v1"


def test_unix_addr(stagctl_bin, start_daemon, tmp_path):
    sock = f"unix:{tmp_path / 's.sock'}"
    start_daemon("--listen", sock)
    assert ok_json(stagctl("--addr", sock, "health")) == {"status": "SERVING"}


def test_unreachable_daemon_exits_2(stagctl_bin):
    r = stagctl("--addr", "127.0.0.1:1", "version", timeout=30)
    assert r.returncode == 2, r
    assert r.stdout == ""
    assert "127.0.0.1:1" in r.stderr, r.stderr


@pytest.mark.parametrize("args", [["frobnicate"], ["--local", "frobnicate"]])
def test_unknown_command_exits_2(stagctl_bin, args):
    r = stagctl(*args)
    assert r.returncode == 2, r
    assert "frobnicate" in r.stderr, r.stderr


def test_no_command_exits_2(stagctl_bin):
    r = stagctl()
    assert r.returncode == 2, r
    assert r.stderr.strip()


def test_unknown_option_exits_2(stagctl_bin):
    r = stagctl("--frob", "version")
    assert r.returncode == 2, r
    assert "--frob" in r.stderr, r.stderr
