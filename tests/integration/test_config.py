# SPDX-License-Identifier: Apache-2.0
"""test_config.py — options from flags, STAGD_* environment variables and config files:
precedence (defaults < file < env < flags), errors (exit 2, naming the option or
FILE:LINE), --help and --version."""
import re
import subprocess

import grpc
import pytest

import harness
from harness import rpc

OPTIONS = ["--listen", "--lsp", "--stdio", "--lsp-listen", "--device", "--config", "--workers",
           "--log-level", "--max-message-bytes", "--deadline-ms", "--shutdown-timeout-ms",
           "--help", "--version"]
ENV_VARS = ["STAGD_LISTEN", "STAGD_LSP_LISTEN", "STAGD_DEVICE", "STAGD_WORKERS", "STAGD_LOG_LEVEL",
            "STAGD_MAX_MESSAGE_BYTES", "STAGD_DEADLINE_MS", "STAGD_SHUTDOWN_TIMEOUT_MS", "STAGD_CONFIG"]


def run_stagd(args, env=None, timeout=5):
    """Runs stagd expecting it to exit by itself (a bad option, --help, --version)."""
    try:
        return subprocess.run([harness.stagd_bin(), *args], capture_output=True, text=True,
                              env=env or harness.base_env(), timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        pytest.fail(f"stagd {' '.join(args)} was expected to exit but still ran after {timeout} s "
                    f"(it accepted the option?); stderr:\n{err}", pytrace=False)


def serves(addr, pb2):
    with grpc.insecure_channel(addr) as ch:
        try:
            return rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply, timeout=1).api == "stagd.v1"
        except grpc.RpcError:
            return False


@pytest.fixture
def sockets(tmp_path):
    return {k: f"unix:{tmp_path / (k + '.sock')}" for k in ("file", "env", "flag")}


def test_listen_from_config_file(start_daemon, tmp_path, sockets, pb2):
    conf = tmp_path / "stagd.conf"
    conf.write_text(f"# a comment\n\nlisten = {sockets['file']}\n")
    d = start_daemon("--config", str(conf))
    assert d.grpc_addrs == [sockets["file"]], d.grpc_addrs
    assert serves(sockets["file"], pb2)


def test_config_file_from_env(start_daemon, tmp_path, sockets, pb2):
    conf = tmp_path / "stagd.conf"
    conf.write_text(f"listen = {sockets['file']}\n")
    d = start_daemon(env=harness.base_env(STAGD_CONFIG=conf))
    assert d.grpc_addrs == [sockets["file"]], d.grpc_addrs


def test_env_beats_config_file(start_daemon, tmp_path, sockets, pb2):
    conf = tmp_path / "stagd.conf"
    conf.write_text(f"listen = {sockets['file']}\n")
    d = start_daemon("--config", str(conf), env=harness.base_env(STAGD_LISTEN=sockets["env"]))
    assert d.grpc_addrs == [sockets["env"]], d.grpc_addrs
    assert serves(sockets["env"], pb2)
    assert not serves(sockets["file"], pb2)


def test_flag_beats_env_and_file(start_daemon, tmp_path, sockets, pb2):
    conf = tmp_path / "stagd.conf"
    conf.write_text(f"listen = {sockets['file']}\n")
    d = start_daemon("--config", str(conf), "--listen", sockets["flag"],
                     env=harness.base_env(STAGD_LISTEN=sockets["env"]))
    assert d.grpc_addrs == [sockets["flag"]], d.grpc_addrs
    assert serves(sockets["flag"], pb2)
    assert not serves(sockets["env"], pb2) and not serves(sockets["file"], pb2)


def test_env_listen_comma_separated(start_daemon, sockets, pb2):
    d = start_daemon(env=harness.base_env(STAGD_LISTEN=f"{sockets['env']},127.0.0.1:0"), expect_grpc=2)
    assert sockets["env"] in d.grpc_addrs
    assert all(serves(a, pb2) for a in d.grpc_addrs)


def _debug_lines(d):
    return [l for l in d.log.lines if " DEBUG " in l]


def test_log_level_flag_beats_env_beats_file(start_daemon, tmp_path, pb2):
    conf = tmp_path / "stagd.conf"
    conf.write_text("log-level = error\n")
    # file says error, env says debug, flag says info: info wins (no DEBUG lines,
    # but the INFO `serving` line).
    d = start_daemon("--config", str(conf), "--listen", "127.0.0.1:0", "--log-level", "info",
                     env=harness.base_env(STAGD_LOG_LEVEL="debug"))
    assert serves(d.addr, pb2)
    assert d.terminate() == 0
    assert not _debug_lines(d), d.log.text()
    # file says info, env says debug: debug wins (successful requests are logged at debug).
    conf.write_text("log-level = info\n")
    d = start_daemon("--config", str(conf), "--listen", "127.0.0.1:0",
                     env=harness.base_env(STAGD_LOG_LEVEL="debug"))
    assert serves(d.addr, pb2)
    assert d.terminate() == 0
    assert _debug_lines(d), d.log.text()


def _compute_units(d, pb2):
    with grpc.insecure_channel(d.addr) as ch:
        devs = rpc(ch, "ListDevices", pb2.ListDevicesRequest(), pb2.ListDevicesReply).devices
    return [x.compute_units for x in devs if x.name == "cpu"][0]


def test_workers_precedence(start_daemon, tmp_path, pb2):
    # The cpu device reports the worker threads as its compute units.
    conf = tmp_path / "stagd.conf"
    conf.write_text("workers = 3\nlisten = 127.0.0.1:0\n")
    assert _compute_units(start_daemon("--config", str(conf)), pb2) == 3
    env = harness.base_env(STAGD_WORKERS="5")
    assert _compute_units(start_daemon("--config", str(conf), env=env), pb2) == 5
    assert _compute_units(start_daemon("--config", str(conf), "--workers", "7", env=env), pb2) == 7


def test_device_cpu_is_default(start_daemon, pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--device", "cpu")
    with grpc.insecure_channel(d.addr) as ch:
        devs = rpc(ch, "ListDevices", pb2.ListDevicesRequest(), pb2.ListDevicesReply).devices
    assert [x.name for x in devs if x.is_default] == ["cpu"], devs


def test_max_message_bytes_from_env(start_daemon, pb2):
    d = start_daemon("--listen", "127.0.0.1:0", env=harness.base_env(STAGD_MAX_MESSAGE_BYTES="1024"))
    with grpc.insecure_channel(d.addr) as ch:
        assert rpc(ch, "Ping", pb2.PingRequest(payload="x" * 100), pb2.PingReply).payload == "x" * 100
        with pytest.raises(grpc.RpcError) as e:
            rpc(ch, "Ping", pb2.PingRequest(payload="x" * 5000), pb2.PingReply)
        assert e.value.code() in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INVALID_ARGUMENT)
        assert rpc(ch, "Ping", pb2.PingRequest(payload="ok"), pb2.PingReply).payload == "ok"
        # clients learn the limit (they send larger tensors in pieces)
        assert rpc(ch, "Version", pb2.VersionRequest(), pb2.VersionReply).max_message_bytes == 1024


@pytest.mark.parametrize("coop_env,reason", [
    ("", "no 16x16x16 float16 -> float32 subgroup cooperative-matrix shape"),
    ("khr", "STAGD_VK_COOP=khr, but the device offers no VK_KHR_cooperative_matrix 16x16x16 "
            "float16 -> float32 subgroup shape"),
    ("nv", "STAGD_VK_COOP=nv, but the device offers no VK_NV_cooperative_matrix 16x16x16 "
           "float16 -> float32 subgroup shape")])
def test_devices_report_the_coop_kernel(start_daemon, pb2, coop_env, reason):
    # lavapipe offers no cooperative matrix: no coop kernel, and the reason says why
    env = harness.base_env(**({"STAGD_VK_COOP": coop_env} if coop_env else {}))
    d = start_daemon("--listen", "127.0.0.1:0", env=env)
    with grpc.insecure_channel(d.addr) as ch:
        devs = rpc(ch, "ListDevices", pb2.ListDevicesRequest(), pb2.ListDevicesReply).devices
    vk = [x for x in devs if x.backend == "vulkan" and "llvmpipe" in x.description]
    assert vk, devs
    assert vk[0].coop_kernel == "" and vk[0].coop_reason == reason


def test_deadline_ms_caps_requests(start_daemon, pb2):
    d = start_daemon("--listen", "127.0.0.1:0", "--deadline-ms", "200")
    with grpc.insecure_channel(d.addr) as ch:
        with pytest.raises(grpc.RpcError) as e:
            rpc(ch, "Ping", pb2.PingRequest(delay_ms=2000), pb2.PingReply, timeout=10)
        assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert rpc(ch, "Ping", pb2.PingRequest(payload="quick"), pb2.PingReply).payload == "quick"


def test_unknown_flag_exits_2(stagd_bin):
    r = run_stagd(["--colour", "blue"])
    assert r.returncode == 2, r
    assert "--colour" in r.stderr, r.stderr


@pytest.mark.parametrize("flag,value", [("--workers", "many"), ("--workers", "0"), ("--workers", "-3"),
                                        ("--log-level", "loud"), ("--device", "abacus"),
                                        ("--max-message-bytes", "lots"), ("--deadline-ms", "soon")])
def test_bad_flag_value_exits_2(stagd_bin, flag, value):
    r = run_stagd(["--listen", "127.0.0.1:0", flag, value])
    assert r.returncode == 2, r
    assert flag.lstrip("-") in r.stderr, r.stderr


def test_flag_missing_value_exits_2(stagd_bin):
    r = run_stagd(["--workers"])
    assert r.returncode == 2, r
    assert "workers" in r.stderr, r.stderr


def test_bad_env_value_exits_2(stagd_bin):
    r = run_stagd(["--listen", "127.0.0.1:0"], env=harness.base_env(STAGD_DEADLINE_MS="soon"))
    assert r.returncode == 2, r
    assert "STAGD_DEADLINE_MS" in r.stderr, r.stderr


@pytest.mark.parametrize("line", ["this line has no equals sign", "no-such-option = 1",
                                  "workers = many", "log-level = loud"])
def test_config_file_bad_line_exits_2(stagd_bin, tmp_path, line):
    conf = tmp_path / "bad.conf"
    conf.write_text(f"# stagd config\nlisten = 127.0.0.1:0\n{line}\n")
    r = run_stagd(["--config", str(conf)])
    assert r.returncode == 2, r
    assert re.search(rf"{re.escape(str(conf))}:3\b", r.stderr) or re.search(r"bad\.conf:3\b", r.stderr), r.stderr


def test_missing_config_file_exits_2(stagd_bin, tmp_path):
    r = run_stagd(["--config", str(tmp_path / "absent.conf")])
    assert r.returncode == 2, r
    assert "absent.conf" in r.stderr, r.stderr


def test_help_documents_every_option(stagd_bin):
    r = run_stagd(["--help"])
    assert r.returncode == 0, r
    for opt in OPTIONS:
        assert re.search(rf"(^|\s){re.escape(opt)}(\s|=|$)", r.stdout, re.M), f"--help does not document {opt}"
    for var in ENV_VARS:
        assert var in r.stdout, f"--help does not mention {var}"


def test_version_flag(stagd_bin, pb2):
    r = run_stagd(["--version"])
    assert r.returncode == 0, r
    assert re.search(r"\d+\.\d+\.\d+", r.stdout), r.stdout
