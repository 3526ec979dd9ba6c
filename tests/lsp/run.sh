#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — editor-integration tests: builds, unit-tests and packages the VS Code
# extension (clients/vscode → stagd.vsix), then runs the LSP protocol tests
# (vscode-jsonrpc, raw frames, TCP) and the headless Neovim test against the
# real daemon.
#
#   STAGD_BIN=build/server/stagd bash tests/lsp/run.sh
#
# Needs node >= 20 with npm, and Debian's neovim package; the npm packages come
# from the lock files (npm ci). Runs in well under 3 minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
started=$SECONDS

if [[ -z "${STAGD_BIN:-}" ]]; then
  echo "run.sh: STAGD_BIN is not set: point it at the stagd binary (e.g. build/server/stagd)" >&2
  exit 2
fi
case "$STAGD_BIN" in /*) ;; *) STAGD_BIN=$PWD/$STAGD_BIN ;; esac
if [[ ! -x "$STAGD_BIN" || -d "$STAGD_BIN" ]]; then
  echo "run.sh: STAGD_BIN=$STAGD_BIN is not an executable file" >&2
  exit 2
fi
export STAGD_BIN
for tool in node npm nvim python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "run.sh: '$tool' is not installed (Debian: apt-get install -y nodejs npm neovim python3)" >&2
    exit 2
  fi
done

npm_ci() { (cd "$1" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error); }

echo "== clients/vscode: npm ci, compile, unit tests"
ext=$root/clients/vscode
npm_ci "$ext"
rm -rf "$ext/out" "$ext/stagd.vsix"
(cd "$ext" && npm run --silent compile && npm test --silent)

echo "== clients/vscode: vsce package"
(cd "$ext" && npm run --silent package >/dev/null)
if [[ ! -s "$ext/stagd.vsix" ]]; then
  echo "run.sh: vsce package did not produce clients/vscode/stagd.vsix" >&2
  exit 1
fi
# The package must hold the manifest, the compiled entry point and the language client.
python3 - "$ext/stagd.vsix" <<'PY'
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = set(z.namelist())
    need = ["extension.vsixmanifest", "extension/package.json", "extension/out/extension.js",
            "extension/node_modules/vscode-languageclient/package.json"]
    missing = [n for n in need if n not in names]
    leaked = [n for n in names if n.startswith(("extension/src/", "extension/out/test/"))]
    if missing or leaked:
        sys.exit(f"run.sh: bad stagd.vsix: missing {missing}, should not contain {leaked[:5]}")
    manifest = json.loads(z.read("extension/package.json"))
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    assert commands == {"stagd.showConvertedCode", "stagd.showGraph"}, commands
    print(f"stagd.vsix: {len(names)} files, entry {manifest['main']}")
PY

echo "== tests/lsp: npm ci, compile, protocol and Neovim tests (STAGD_BIN=$STAGD_BIN)"
npm_ci "$root/tests/lsp"
rm -rf "$root/tests/lsp/out"
(cd "$root/tests/lsp" && npm run --silent compile && npm test --silent)

echo "== tests/lsp/run.sh passed in $((SECONDS - started)) s"
