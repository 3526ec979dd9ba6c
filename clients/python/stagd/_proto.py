# SPDX-License-Identifier: Apache-2.0
"""_proto.py — finds (or makes) the generated protobuf modules `stagd_pb2` and `health_pb2`.

Lookup order:
  1. the directory in the environment variable STAGD_GENERATED_DIR;
  2. stagd/_generated/ inside this package (an installed package: pip, CMake, the .deb);
  3. <repo>/build/python/stagd_gen, then <repo>/build-release/python/stagd_gen (made by
     the CMake builds, for a checkout);
  4. a per-user cache, ~/.cache/stagd/proto-<hash of the .proto files> (honours
     XDG_CACHE_HOME), filled by running protoc (/usr/bin/protoc, else `protoc` on PATH)
     on <repo>/proto/*.proto. Nothing is ever written into the source tree.

The modules are flat (`import stagd_pb2`), as `protoc --python_out` makes them; the
chosen directory is put on sys.path so every importer shares one copy. hashlib,
subprocess and friends are imported only when the cache must be consulted, so that
`import stagd` stays cheap.
"""
import importlib
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
PROTO_DIR = REPO_ROOT / "proto"
PROTO_FILES = ("stagd.proto", "health.proto")
MODULES = ("stagd_pb2", "health_pb2")
PACKAGED = Path(__file__).resolve().parent / "_generated"

_loaded = None


def _complete(directory):
    return all((Path(directory) / f"{m}.py").is_file() for m in MODULES)


def _protoc():
    import shutil
    if os.access("/usr/bin/protoc", os.X_OK):
        return "/usr/bin/protoc"
    found = shutil.which("protoc")
    if not found:
        raise RuntimeError("stagd: cannot generate the protobuf modules: protoc not found "
                           "(install protobuf-compiler, build the repo, or set STAGD_GENERATED_DIR)")
    return found


def proto_hash():
    """A short hash of the .proto files' names and contents (the cache key)."""
    import hashlib
    h = hashlib.sha256()
    for name in PROTO_FILES:
        h.update(name.encode() + b"\0")
        h.update((PROTO_DIR / name).read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def generate(cache_root=None):
    """Runs protoc into <cache_root>/proto-<hash> unless already there; returns that dir."""
    if cache_root is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        cache_root = Path(base) / "stagd"
    import shutil
    import subprocess
    import tempfile
    cache_root = Path(cache_root)
    target = cache_root / f"proto-{proto_hash()}"
    if _complete(target):
        return target
    cache_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".proto-", dir=cache_root))
    try:
        cmd = [_protoc(), f"--proto_path={PROTO_DIR}", f"--python_out={tmp}"]
        cmd += [str(PROTO_DIR / f) for f in PROTO_FILES]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"stagd: protoc failed ({' '.join(cmd)}):\n{res.stderr}")
        try:
            os.rename(tmp, target)  # atomic; loses harmlessly to a concurrent generator
        except OSError:
            if not _complete(target):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def generated_dir():
    """The directory holding stagd_pb2.py and health_pb2.py (see the module docstring)."""
    env = os.environ.get("STAGD_GENERATED_DIR")
    if env:
        if not _complete(env):
            raise RuntimeError(f"stagd: STAGD_GENERATED_DIR={env} has no stagd_pb2.py/health_pb2.py")
        return Path(env)
    if _complete(PACKAGED):
        return PACKAGED
    for build in ("build", "build-release"):
        built = REPO_ROOT / build / "python" / "stagd_gen"
        if _complete(built):
            return built
    if not (PROTO_DIR / PROTO_FILES[0]).is_file():
        raise RuntimeError(f"stagd: this package has no generated protobuf modules "
                           f"({PACKAGED} is missing) and no proto/ beside it: reinstall it "
                           "(pip install clients/python, or the stagd .deb)")
    return generate()


def load():
    """Returns (stagd_pb2, health_pb2), importing them once."""
    global _loaded
    if _loaded is None:
        directory = str(generated_dir())
        if directory not in sys.path:
            sys.path.insert(0, directory)
        _loaded = tuple(importlib.import_module(m) for m in MODULES)
    return _loaded
