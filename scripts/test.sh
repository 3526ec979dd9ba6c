#!/usr/bin/env bash
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
echo "== pytest"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration
