#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test.sh — the README's test command: installs what is needed, builds with
# -Werror and ASan/UBSan, and runs every test (ctest: C unit tests and conformance
# suites; pytest: integration tests against the real daemon).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh test >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export STAGD_BIN=$PWD/build/server/stagd
export STAGCTL_BIN=$PWD/build/clients/stagctl/stagctl
export STAGD_GENERATED_DIR=$PWD/build/python/stagd_gen
export PYTHONPATH=$PWD/clients/python${PYTHONPATH:+:$PYTHONPATH}

echo "== ctest"
(cd build && ctest --output-on-failure -j"$(nproc)")
echo "== LSP protocol, Neovim and VS Code extension tests"
bash tests/lsp/run.sh
echo "== deployment manifests (deploy/test.sh manifests)"
if command -v kubectl >/dev/null && kubectl kustomize --help >/dev/null 2>&1 &&
   [ "$(kubectl version --client -o json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(int("".join(c for c in json.load(sys.stdin)["clientVersion"]["minor"] if c.isdigit())) >= 27)' 2>/dev/null)" = True ]; then
  bash deploy/test.sh manifests
else
  echo "SKIPPED: deploy/test.sh manifests needs kubectl 1.27 or later (not a Debian 12 package; docs/deploy.md)"
fi
echo "== pytest"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration
