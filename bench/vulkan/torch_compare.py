#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torch_compare.py — stagd's Vulkan matmul, staged MLP forward and fused elementwise
chain beside PyTorch on the same GPU, in one run, written as a markdown table (issue #6; scripts/gpu-run.sh runs it
on a lent GPU, docs/performance.md "Running the GPU figures").

  stagd:  BENCH --matmul-variants --sizes S --no-cpu --reps R   (every matmul variant,
          float32 and float16 squares) and BENCH --mlp B,D0,..,Dn --reps R (the staged
          forward pass, resident and from the host, checked against the CPU backend) and
          BENCH --fused-chain (an 11-op float32 chain as one generated kernel vs one
          dispatch per op, its bandwidth against a one-op kernel's, bits checked); the
          MLP again with STAGD_FUSE=0 (each bias and relu its own kernel instead of
          the matmul's epilogue: docs/vulkan.md "Epilogues"), its device rows marked so;
  torch:  torch.matmul on cuda for the same products (float32 with TF32 off, float16)
          and the same MLP and chain, each the best of R runs timed with CUDA events
          after a warm-up; the host-to-host pass is timed with the host clock.

PyTorch is optional: without torch or without CUDA the table holds the stagd figures
alone and says why (so this also runs on lavapipe: --quick, tested by
test_torch_compare.py). Exits 1 when a bench run fails, a staged MLP result is off
the CPU backend's by more than 1e-3 (relative) or a fused chain's bits differ from its
ops one by one, else 0.

Usage: torch_compare.py BENCH [--quick] [--out FILE.md] [--sizes N,N,..]
                        [--mlp B,D0,..,Dn] [--reps R] [--timeout SECONDS]
"""
import argparse
import os
import platform
import re
import subprocess
import sys
import threading
import time

FULL_SIZES = "256,512,1024,2048,4096"
FULL_MLP = "4096,4096,4096,4096,10"
QUICK_SIZES = "64,128"
QUICK_MLP = "32,64,64,10"
MLP_TOLERANCE = 1e-3

DEVICE_RE = re.compile(r"# (vulkan:\d+)\s+(.*)$")
MMV_RE = re.compile(r"mmv (\w+)\s+(\d+)x(\d+)x(\d+)\s+(vulkan:\d+) (\S+)\s+([\d.]+) GFLOPS")
FUSED_RE = re.compile(r"(tanh|arith) chain \((\d+) ops\) f32 n=(\d+) (vulkan:\d+)\s+fused\s+([\d.]+) ms "
                      r"\(([\d.]+) GB/s, (\d+)% of one-op\), op by op\s+([\d.]+) ms.*bits (\w+)")
MLP_RE = re.compile(r"mlp (\S+)\s+(cpu|vulkan:\d+ \w+)\s+([\d.]+) ms\s+([\d.]+) GFLOPS"
                    r"(?:\s+\(rel err ([\d.e+-]+))?")


class Log:
    """The raw bench lines, echoed and (with a path) written as they come, so a run
    killed from outside still leaves them."""

    def __init__(self, path):
        self.f = open(path, "w") if path else None

    def line(self, text):
        print(text, flush=True)
        if self.f:
            self.f.write(text + "\n")
            self.f.flush()


def run_bench(cmd, timeout, log, env=None):
    """Runs one bench command (env: variables added to ours), logging its lines; returns
    (lines, why-not-complete or None). A run past `timeout` seconds is killed and its
    lines so far are kept."""
    log.line("$ " + "".join("%s=%s " % kv for kv in (env or {}).items()) + " ".join(cmd))
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(os.environ, **env) if env else None)
    except OSError as e:
        return [], "cannot run %s: %s" % (cmd[0], e)
    lines, deadline = [], time.monotonic() + timeout
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            line = line.rstrip("\n")
            log.line(line)
            lines.append(line)
    finally:
        timer.cancel()
    rc = proc.wait()
    if time.monotonic() >= deadline:
        return lines, "killed after %d s (partial figures)" % timeout
    if rc != 0:
        return lines, "exit status %d" % rc
    return lines, None


def parse(lines):
    devices, mmv, mlp = {}, [], []
    for line in lines:
        m = DEVICE_RE.match(line)
        if m:
            devices[m.group(1)] = m.group(2).strip()
        m = MMV_RE.match(line)
        if m:
            mmv.append({"dtype": m.group(1), "n": int(m.group(2)), "shape": (int(m.group(2)),
                        int(m.group(3)), int(m.group(4))), "device": m.group(5),
                        "variant": m.group(6), "gflops": float(m.group(7))})
        m = MLP_RE.match(line)
        if m:
            mlp.append({"dims": m.group(1), "who": m.group(2), "ms": float(m.group(3)),
                        "gflops": float(m.group(4)),
                        "err": float(m.group(5)) if m.group(5) else None})
    return devices, mmv, mlp


def parse_fused(lines):
    return [{"chain": m.group(1), "ops": int(m.group(2)), "n": int(m.group(3)), "device": m.group(4),
             "ms": float(m.group(5)), "gbs": float(m.group(6)), "share": int(m.group(7)),
             "plain_ms": float(m.group(8)), "bits": m.group(9)}
            for m in (FUSED_RE.search(x) for x in lines) if m]


class Torch:
    """PyTorch on CUDA, or why not (self.why)."""

    def __init__(self):
        self.why = None
        try:
            import torch
        except ImportError as e:
            self.why = "PyTorch is not installed (%s)" % e
            return
        self.torch = torch
        if not torch.cuda.is_available():
            self.why = "PyTorch %s sees no CUDA device" % torch.__version__
            return
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        props = torch.cuda.get_device_properties(0)
        self.name = "%s (%d SMs, %.0f GiB; PyTorch %s, CUDA %s)" % (
            props.name, props.multi_processor_count, props.total_memory / 2**30,
            torch.__version__, torch.version.cuda)

    def best_ms(self, fn, reps):
        """Best of reps CUDA-event-timed calls after three warm-ups."""
        torch = self.torch
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end))
        return best

    def matmul_gflops(self, dtype, n, reps):
        torch = self.torch
        dt = {"float32": torch.float32, "float16": torch.float16}[dtype]
        a = torch.rand(n, n, device="cuda", dtype=dt) - 0.5
        b = torch.rand(n, n, device="cuda", dtype=dt) - 0.5
        ms = self.best_ms(lambda: torch.matmul(a, b), reps)
        return 2.0 * n ** 3 / (ms / 1e3) / 1e9

    def chain_ms(self, n, tanh, reps):
        """bench_fused_chain.c's chain (tanh, or neg in its place) on n float32, eager."""
        torch = self.torch
        x = torch.rand(n, device="cuda") * 6 - 3
        act = torch.tanh if tanh else torch.neg

        def chain():
            y = torch.abs(x * 1.5 + 0.5) * x - 0.25
            return act(torch.sqrt(torch.abs(y) + 1.0) * 2.0) + x
        return self.best_ms(chain, reps)

    def mlp_ms(self, dims, reps):
        """(resident ms, host ms) for the forward pass bench_mlp.c stages, float32."""
        torch = self.torch
        gen = torch.Generator().manual_seed(0)
        host = [(torch.rand(dims[0], dims[1], generator=gen) - 0.5) * 12 ** 0.5]
        for i in range(1, len(dims) - 1):
            host.append((torch.rand(dims[i], dims[i + 1], generator=gen) - 0.5)
                        * (12.0 / dims[i]) ** 0.5)

        def forward(x, *ws):
            for w in ws[:-1]:
                x = torch.relu(x @ w)
            return torch.softmax(x @ ws[-1], dim=-1)

        dev = [t.cuda() for t in host]
        resident = self.best_ms(lambda: forward(*dev), reps)
        best = float("inf")
        for r in range(reps + 1):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            forward(*[t.cuda() for t in host]).cpu()
            if r:
                best = min(best, (time.perf_counter() - t0) * 1e3)
        return resident, best


def ratio(x):
    """A speed ratio for a table cell (3 decimals; 2 digits when tiny, never a bare 0)."""
    return fmt(x, "%.3f" if x is None or x >= 0.01 else "%.2g")


def fmt(x, spec=None):
    """x for a table cell: "—" when None; GFLOPS-like values to 0.1 or 3 digits."""
    if x is None:
        return "—"
    return (spec or ("%.1f" if abs(x) >= 100 else "%.3g")) % x


def matmul_table(mmv):
    """One row per (device, dtype, n): each variant's GFLOPS, cuBLAS's, and the ratios of
    the auto choice and of the best variant to cuBLAS; then the issue's goal line."""
    variants = list(dict.fromkeys(r["variant"].split("=")[0] for r in mmv))
    rows = {}
    for r in mmv:
        row = rows.setdefault((r["device"], r["dtype"], r["n"]), {"torch": r.get("torch")})
        row[r["variant"].split("=")[0]] = r["gflops"]
        if r["variant"].startswith("auto="):
            row["chose"] = r["variant"][5:]
    out = ["", "## Matmul (square n x n x n), GFLOPS", "",
           "| device | dtype | n | " + " | ".join(variants) + " | cuBLAS | auto x cuBLAS | "
           "best x cuBLAS |", "| --- | --- | ---: |" + " ---: |" * (len(variants) + 3)]
    goal = None
    for (dev, dt, n), row in rows.items():
        cells = [fmt(row.get(v)) + (" (%s)" % row["chose"] if v == "auto" and "chose" in row
                                    else "") for v in variants]
        best = max(row.get(v) or 0 for v in variants)
        ref = row["torch"]
        out.append("| %s | %s | %d | %s | %s | %s | %s |" % (
            dev, dt, n, " | ".join(cells), fmt(ref),
            ratio(row["auto"] / ref if ref and row.get("auto") else None),
            ratio(best / ref if ref else None)))
        if ref and dt == "float32" and n == 4096:
            goal = (dev, best / ref)
    if goal:
        out += ["", "Goal (issue #6: float32 n=4096 at >= 0.5x cuBLAS): %s, best variant "
                "%.3fx cuBLAS on %s." % ("met" if goal[1] >= 0.5 else "NOT met", goal[1],
                                         goal[0])]
    return out


def fused_table(fused):
    out = ["", "## Fused elementwise chain (float32; `bench_vulkan --fused-chain`)", "",
           "| device | chain | n | fused ms | GB/s | share of a one-op kernel | op by op ms | "
           "fused is | PyTorch eager ms | x PyTorch |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in fused:
        ref = r.get("torch")
        out.append("| %s | %s (%d ops) | %d | %.3f | %.1f | %d%% | %.3f | %s | %s | %s |" % (
            r["device"], r["chain"], r["ops"], r["n"], r["ms"], r["gbs"], r["share"], r["plain_ms"],
            ratio(r["plain_ms"] / r["ms"]), fmt(ref, "%.3f"), ratio(ref / r["ms"] if ref else None)))
    return out


def markdown(args, devices, mmv, mlp, torch, problems, elapsed, fused=()):
    out = ["# stagd Vulkan vs PyTorch (issue #6)", ""]
    out.append("- command: `%s`" % " ".join(["bench/vulkan/torch_compare.py"] + sys.argv[1:]))
    out.append("- date: %s; host: %s, %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                             platform.node(), platform.platform()))
    for d, desc in sorted(devices.items()):
        out.append("- stagd %s: %s" % (d, desc))
    out.append("- PyTorch: %s" % (torch.why or torch.name))
    out.append("- timing: stagd best of %d host-timed runs (begin, record, submit, fence wait) "
               "after a warm-up; PyTorch best of %d CUDA-event-timed runs after 3 warm-ups; "
               "float32 with TF32 off; run took %.0f s" % (args.reps, args.reps, elapsed))
    for p in problems:
        out.append("- **problem**: %s" % p)
    out += matmul_table(mmv)
    if not mmv and args.torch_rows:
        out += ["", "No stagd matmul figures; cuBLAS alone:", "", "| dtype | n | cuBLAS GFLOPS |",
                "| --- | ---: | ---: |"] + args.torch_rows
    out += ["", "## Staged MLP forward %s (relu between layers, softmax), float32" % args.mlp, "",
            "| where | stagd ms | stagd GFLOPS | rel err vs CPU | PyTorch ms | x PyTorch |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in mlp:
        ref = r.get("torch")
        out.append("| %s | %.3f | %s | %s | %s | %s |" % (
            r["who"], r["ms"], fmt(r["gflops"]), fmt(r["err"], "%.1e"), fmt(ref, "%.3f"),
            ratio(ref / r["ms"] if ref else None)))
    out += ["", "x cuBLAS and x PyTorch are speed ratios (above 1: stagd faster). "
            "'resident': inputs already on the device, result left there; 'host': host "
            "arrays in, host array out (uploads and download included); 'STAGD_FUSE=0': "
            "each bias add and relu its own kernel, not the matmul's epilogue.", ""]
    if fused:
        out += fused_table(fused) + [""]
    return "\n".join(out)


def torch_figures(torch, args, mmv, mlp):
    """PyTorch's figure for every requested (dtype, n), whatever stagd measured, then the
    MLP; each stagd row gets its baseline as "torch"; returns {(dtype, n): GFLOPS}."""
    gflops = {}
    for dt in ("float32", "float16"):
        for n in (int(x) for x in args.sizes.split(",")):
            gflops[(dt, n)] = torch.matmul_gflops(dt, n, args.reps)
            args.torch_rows.append("| %s | %d | %s |" % (dt, n, fmt(gflops[(dt, n)])))
            print("torch matmul %s n=%d %.1f GFLOPS" % (dt, n, gflops[(dt, n)]), flush=True)
    for r in mmv:
        r["torch"] = gflops.get((r["dtype"], r["n"]))
    dims = [int(x) for x in args.mlp.split(",")]
    resident, host = torch.mlp_ms(dims, args.reps)
    print("torch mlp %s resident %.3f ms, host %.3f ms" % (args.mlp, resident, host), flush=True)
    for r in mlp:
        if " resident" in r["who"]:
            r["torch"] = resident
        elif " host" in r["who"]:
            r["torch"] = host
    for r in args.fused:
        r["torch"] = torch.chain_ms(r["n"], r["chain"] == "tanh", args.reps)
        print("torch %s chain n=%d %.3f ms" % (r["chain"], r["n"], r["torch"]), flush=True)
    return gflops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench", help="path to bench_vulkan")
    ap.add_argument("--quick", action="store_true", help="small sizes (lavapipe, the test)")
    ap.add_argument("--out", help="write the markdown here too")
    ap.add_argument("--sizes", help="matmul sizes, N,N,.. (default %s)" % FULL_SIZES)
    ap.add_argument("--mlp", help="MLP B,D0,..,Dn (default %s)" % FULL_MLP)
    ap.add_argument("--reps", type=int, help="timed runs per figure (default 10, quick 2)")
    ap.add_argument("--timeout", type=int, default=240,
                    help="seconds per bench run (two runs: keeps a GPU call under 10 min)")
    args = ap.parse_args()
    args.sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    args.mlp = args.mlp or (QUICK_MLP if args.quick else FULL_MLP)
    args.reps = args.reps or (2 if args.quick else 10)
    args.torch_rows = []
    t0 = time.monotonic()

    log, problems = Log(args.out and args.out.rsplit(".", 1)[0] + ".log"), []
    reps = ["--reps", str(args.reps)]
    lines, why = run_bench([args.bench, "--matmul-variants", "--sizes", args.sizes, "--no-cpu"]
                           + reps, args.timeout, log)
    if why:
        problems.append("matmul sweep: " + why)
    more, why = run_bench([args.bench, "--mlp", args.mlp] + reps, args.timeout, log)
    if why:
        problems.append("MLP forward: " + why)
    plain, why = run_bench([args.bench, "--mlp", args.mlp] + reps, args.timeout, log, {"STAGD_FUSE": "0"})
    if why:
        problems.append("MLP forward with STAGD_FUSE=0: " + why)
    chain, why = run_bench([args.bench, "--fused-chain"] + (["--quick"] if args.quick else []),
                           args.timeout, log)
    if why:
        problems.append("fused chain: " + why)
    args.fused = parse_fused(chain)
    problems += ["fused %s chain on %s: bits %s from op by op" % (r["chain"], r["device"], r["bits"])
                 for r in args.fused if r["bits"] != "equal"]
    devices, mmv, mlp = parse(lines + more)
    mlp += [dict(r, who=r["who"] + ", STAGD_FUSE=0") for r in parse(plain)[2] if r["who"] != "cpu"]
    if not devices:
        problems.append("the bench found no Vulkan device: %s" %
                        next((x for x in lines if x.startswith("no Vulkan")), "see its output"))
    problems += ["a matmul variant failed: " + x.strip()[len("(failed: "):-1]
                 for x in lines if x.strip().startswith("(failed: ")]
    for r in mlp:
        if r["err"] is not None and not r["err"] <= MLP_TOLERANCE:
            problems.append("staged MLP on %s is off the CPU backend by %.1e (> %g)" % (
                r["who"], r["err"], MLP_TOLERANCE))

    torch = Torch()
    if torch.why:
        print("# PyTorch figures left out: %s" % torch.why, flush=True)
    else:
        print("# PyTorch on %s" % torch.name, flush=True)
        try:
            torch_figures(torch, args, mmv, mlp)
        except Exception as e:  # keep the stagd figures whatever PyTorch does
            problems.append("PyTorch run failed: %s: %s" % (type(e).__name__, e))

    text = markdown(args, devices, mmv, mlp, torch, problems, time.monotonic() - t0, args.fused)
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
