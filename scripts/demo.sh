#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# demo.sh — the README's main-job command: installs what is needed, builds stagd,
# starts the daemon, and sends it real requests through the Python client (gRPC),
# stagctl (gRPC) and an LSP session (stdio), printing every result.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh release >/dev/null
export STAGD_BIN=$PWD/build-release/server/stagd
export STAGCTL_BIN=$PWD/build-release/clients/stagctl/stagctl
export STAGD_GENERATED_DIR=$PWD/build-release/python/stagd_gen
export PYTHONPATH=$PWD/clients/python${PYTHONPATH:+:$PYTHONPATH}
exec /usr/bin/python3 scripts/demo.py
