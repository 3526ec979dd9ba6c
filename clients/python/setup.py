# SPDX-License-Identifier: Apache-2.0
"""setup.py — the one build step pyproject.toml cannot declare: protoc compiles the API
(../../proto/stagd.proto, health.proto) into stagd/_generated/ of the built package.
protoc is Debian's protobuf-compiler (or any `protoc` on PATH)."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "proto"))
PROTOS = ("stagd.proto", "health.proto")


class BuildWithProto(build_py):
    """build_py, then the generated message modules into stagd/_generated/."""

    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "stagd", "_generated")
        os.makedirs(out, exist_ok=True)
        if all(os.path.isfile(os.path.join(PROTO_DIR, p)) for p in PROTOS):
            protoc = shutil.which("protoc")
            if not protoc:
                raise SystemExit("stagd: building the package needs protoc "
                                 "(Debian: apt-get install protobuf-compiler)")
            subprocess.run([protoc, f"--proto_path={PROTO_DIR}", f"--python_out={out}",
                            *[os.path.join(PROTO_DIR, p) for p in PROTOS]], check=True)
        elif not os.path.isfile(os.path.join(out, "stagd_pb2.py")):
            raise SystemExit(f"stagd: {PROTO_DIR} has no stagd.proto: build from the stagd "
                             "repository (clients/python)")


setup(cmdclass={"build_py": BuildWithProto})
