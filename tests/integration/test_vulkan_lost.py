# SPDX-License-Identifier: Apache-2.0
"""test_vulkan_lost.py — device loss on vulkan:0 through the daemon (issue #6).

The daemon runs with the test-only fault hook STAGD_VK_FAULT (kernels/vulkan/fault.c,
docs/vulkan.md "Device loss and out of memory"): the second queue submission of the
process reports VK_ERROR_DEVICE_LOST. That request fails with UNAVAILABLE naming the
device, the daemon keeps serving, the next request on vulkan:0 runs on a freshly opened
device, and an eager handle computed on the lost device gives a clear error on Fetch.
"""
import json
import re

import numpy as np
import pytest

import harness
import stagd
from stagd.tensor import _np_value

SUM = "(def f (x) (sum (* (+ x 1.0) x)))"
X = np.array([1, 2, 3], np.float32)  # sum((x + 1) * x) = 20
VK_TIMEOUT = 60.0  # lavapipe compiles pipelines on first use; this catches hangs only


def fault_daemon(start_daemon, tmp_path, spec):
    env = harness.base_env(XDG_CACHE_HOME=str(tmp_path / "cache"), STAGD_VK_FAULT=spec)
    return start_daemon("--listen", "127.0.0.1:0", "--workers", "2", env=env)


def execute(c, gid, device):
    args = json.dumps([{"dtype": "float32", "shape": [3], "data": X.tolist()}])
    r = c.call("Execute", c.pb2.ExecuteRequest(graph_id=gid, args_json=args, device=device),
               timeout=VK_TIMEOUT)
    return json.loads(r.result_json)["data"][0]


def fetch(c, hid):
    t = c.call("Fetch", {"ids": [hid]}, timeout=VK_TIMEOUT).values[0].tensor
    return np.frombuffer(t.data, dtype=np.float32).reshape(tuple(t.shape))


def test_lost_device_fails_one_request_then_reopens(start_daemon, tmp_path):
    d = fault_daemon(start_daemon, tmp_path, "lost@submit:2")
    with stagd.Client(d.addr) as c:
        put = c.call("Put", c.pb2.PutRequest(value=_np_value(c.pb2, X), device="vulkan:0"),
                     timeout=VK_TIMEOUT).result.handle.id  # an upload: no submission
        arg = c.pb2.Value(handle=c.pb2.TensorHandle(id=put))
        made = c.call("EagerOp", c.pb2.EagerOpRequest(op="add", device="vulkan:0", args=[arg, arg]),
                      timeout=VK_TIMEOUT).result.handle.id  # submission 1: stays on the device
        gid = c.call("Stage", c.pb2.StageRequest(sexpr=SUM, filename="lost.sexp")).graph_id

        with pytest.raises(stagd.Unavailable,
                           match=r"vulkan:0 \(llvmpipe.*\) was lost during vkQueueSubmit; the "
                                 r"request failed, the device is reopened for the next one"):
            execute(c, gid, "vulkan:0")  # submission 2: lost
        assert c.health() == "SERVING"
        assert execute(c, gid, "cpu") == 20.0
        assert execute(c, gid, "vulkan:0") == 20.0  # a new VkDevice
        assert execute(c, gid, "vulkan:0") == 20.0
        d.log.wait_for(re.compile(r"vulkan:0 was lost: opening it again"), VK_TIMEOUT)

        # the handle computed on the lost device: its data went with it
        with pytest.raises(stagd.Unavailable,
                           match=r"a tensor's data was on vulkan:0, which was lost; compute it again"):
            fetch(c, made)
        # the uploaded one still has its host copy
        np.testing.assert_array_equal(fetch(c, put), X)
        c.call("Release", {"ids": [made, put]})  # the lost context's last references
        assert execute(c, gid, "vulkan:0") == 20.0
        assert c.health() == "SERVING"


def test_device_oom_fails_one_request(start_daemon, tmp_path):
    # the first device memory block of the process is refused
    d = fault_daemon(start_daemon, tmp_path, "oom@alloc:1")
    with stagd.Client(d.addr) as c:
        gid = c.call("Stage", c.pb2.StageRequest(sexpr=SUM, filename="oom.sexp")).graph_id
        with pytest.raises(stagd.ResourceExhausted,
                           match=r"vulkan:0: out of device memory allocating 67108864 bytes"):
            execute(c, gid, "vulkan:0")
        assert execute(c, gid, "vulkan:0") == 20.0
        assert c.health() == "SERVING"
    assert "was lost" not in d.log.text()


def test_bad_fault_spec_fails_the_device_requests(start_daemon, tmp_path):
    d = fault_daemon(start_daemon, tmp_path, "lost@nowhere:1")
    with stagd.Client(d.addr) as c:
        gid = c.call("Stage", c.pb2.StageRequest(sexpr=SUM, filename="bad.sexp")).graph_id
        with pytest.raises(stagd.InvalidArgument,
                           match=r"environment STAGD_VK_FAULT: bad fault site 'nowhere'"):
            execute(c, gid, "vulkan:0")
        assert execute(c, gid, "cpu") == 20.0
