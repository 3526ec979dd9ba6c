#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — editor-integration tests: builds, unit-tests and packages the VS Code
# extension (clients/vscode → stagd.vsix, bundled by esbuild; vsce's output checked
# for warnings), then runs the LSP protocol tests (vscode-jsonrpc, raw frames, TCP)
# and the headless Neovim and batch Emacs tests against the real daemon.
#
#   STAGD_BIN=build/server/stagd bash tests/lsp/run.sh
#
# Needs node >= 20 with npm, and Debian's neovim, emacs-nox and elpa-eglot; the npm packages come
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
for tool in node npm nvim emacs python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "run.sh: '$tool' is not installed (Debian: apt-get install -y nodejs npm neovim emacs-nox elpa-eglot python3)" >&2
    exit 2
  fi
done

npm_ci() { (cd "$1" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error); }

echo "== clients/vscode: npm ci, compile, unit tests"
ext=$root/clients/vscode
npm_ci "$ext"
rm -rf "$ext/out" "$ext/dist" "$ext/stagd.vsix"
(cd "$ext" && npm run --silent compile && npm test --silent)

echo "== clients/vscode: vsce package (esbuild bundle)"
# vsce runs vscode:prepublish (tsc, then esbuild into dist/extension.js). Its output
# must hold no warning: not the bundling advice, not a missing repository or license.
vsce_log=$(cd "$ext" && npm run --silent package 2>&1) || { echo "$vsce_log" >&2; exit 1; }
if grep -E "WARNING|should bundle|repository' field is missing|LICENSE not found" <<<"$vsce_log"; then
  echo "run.sh: vsce package printed warnings:" >&2
  echo "$vsce_log" >&2
  exit 1
fi
if [[ ! -s "$ext/stagd.vsix" ]]; then
  echo "run.sh: vsce package did not produce clients/vscode/stagd.vsix" >&2
  exit 1
fi
# The package: the manifest, the docs and one bundled entry point that loads (with a
# stand-in for the `vscode` module VS Code provides) and exports activate/deactivate.
python3 - "$ext/stagd.vsix" "$ext" <<'PY'
import json, subprocess, sys, zipfile
vsix, ext = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(vsix) as z:
    names = sorted(z.namelist())
    want = sorted(["[Content_Types].xml", "extension.vsixmanifest", "extension/package.json", "extension/readme.md",
                   "extension/changelog.md", "extension/LICENSE.txt", "extension/dist/extension.js"])
    if names != want:
        sys.exit(f"run.sh: bad stagd.vsix: {names}, want {want}")
    manifest = json.loads(z.read("extension/package.json"))
    bundle = z.read("extension/dist/extension.js").decode()
commands = {c["command"] for c in manifest["contributes"]["commands"]}
assert commands == {"stagd.showConvertedCode", "stagd.showGraph"}, commands
assert manifest["main"] == "./dist/extension.js", manifest["main"]
assert 'require("vscode-languageclient' not in bundle, "vscode-languageclient is not bundled"
probe = r"""
const Module = require('module');
const load = Module._load;
const stub = new Proxy(function () {}, { get: (t, k) => (k === 'then' ? undefined : stub), apply: () => stub, construct: () => stub });
Module._load = function (request, ...rest) { return request === 'vscode' ? stub : load.call(this, request, ...rest); };
const ext = require(process.argv[1]);
if (typeof ext.activate !== 'function' || typeof ext.deactivate !== 'function') { console.error('no activate/deactivate'); process.exit(1); }
console.log('ok');
"""
r = subprocess.run(["node", "-e", probe, f"{ext}/dist/extension.js"], capture_output=True, text=True)
if r.returncode != 0 or r.stdout.strip() != "ok":
    sys.exit(f"run.sh: the bundle does not load: {r.stdout}{r.stderr}")
print(f"stagd.vsix: {len(names)} files, {len(bundle) // 1024} KiB bundle, entry {manifest['main']}, no vsce warnings")
PY

echo "== tests/lsp: npm ci, compile, protocol and Neovim tests (STAGD_BIN=$STAGD_BIN)"
npm_ci "$root/tests/lsp"
rm -rf "$root/tests/lsp/out"
(cd "$root/tests/lsp" && npm run --silent compile && npm test --silent)

echo "== tests/lsp/run.sh passed in $((SECONDS - started)) s"
