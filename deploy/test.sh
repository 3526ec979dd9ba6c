#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test.sh — what of the deployment a machine without a cluster can test (docs/deploy.md
# "Testing the deployment"), part by part, each timed:
#   manifests  kubectl kustomize renders every overlay of deploy/k8s; yamllint is clean;
#              every rendered object validates against the Kubernetes schemas
#              (deploy/k8s/validate, npm's kubernetes-models) and stagd's own rules
#   replicas   3 daemons behind HAProxy, many clients, one replica killed mid-run
#              (tests/integration/test_replicas.py)
#   deb        scripts/package-deb.sh, then the .deb installed in a fresh Debian 12 root
#              (mmdebstrap): stagctl --local version, the daemon and the Python client
#   image      deploy/build-image.sh (lavapipe), then a podman run smoke test: health,
#              a staged run, metrics, SIGTERM → exit 0
# Usage: deploy/test.sh [PART...]   (default: all four; CI runs `manifests` and the
# replica test through scripts/test.sh). Needs root for deb and image.
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(manifests replicas deb image)
[ "${1:-}" = --one ] && parts=()
root=$PWD
stagctl=${STAGCTL_BIN:-$root/build/clients/stagctl/stagctl}

part_manifests() {
  command -v kubectl >/dev/null || { echo "kubectl is not installed: kubectl 1.27 or later renders deploy/k8s" >&2; return 1; }
  local minor
  minor=$(kubectl version --client -o json | python3 -c 'import json,sys; print(int("".join(c for c in json.load(sys.stdin)["clientVersion"]["minor"] if c.isdigit())))')
  [ "$minor" -ge 27 ] || { echo "kubectl 1.$minor is too old: 1.27 or later (kustomize v5) renders deploy/k8s" >&2; return 1; }
  yamllint -s -c deploy/k8s/.yamllint deploy/k8s
  echo "yamllint: clean"
  (cd deploy/k8s/validate && npm ci --no-audit --no-fund --prefer-offline --loglevel=error >/dev/null)
  local out
  out=$(mktemp -d)
  for overlay in deploy/k8s/overlays/*/; do
    name=$(basename "$overlay")
    kubectl kustomize "$overlay" > "$out/$name.yaml"
    yamllint -s -c deploy/k8s/.yamllint "$out/$name.yaml"
    printf '%-9s ' "$name:"
    node deploy/k8s/validate/validate.mjs --stagd "$out/$name.yaml" | tail -1
  done
  # the validator must fail where it should: a misspelt kind and a wrong type
  sed 's/^kind: PodDisruptionBudget/kind: PodDisruptionBudgett/; s/minAvailable: 1/minAvailable: true/' \
    "$out/lavapipe.yaml" > "$out/broken.yaml"
  if node deploy/k8s/validate/validate.mjs "$out/broken.yaml" >/dev/null; then
    echo "validate.mjs accepted a broken manifest" >&2; return 1
  fi
  rm -rf "$out"
}

part_replicas() {
  export STAGD_BIN=${STAGD_BIN:-$root/build/server/stagd} STAGCTL_BIN=$stagctl
  export STAGD_GENERATED_DIR=${STAGD_GENERATED_DIR:-$root/build/python/stagd_gen}
  export PYTHONPATH=$root/clients/python${PYTHONPATH:+:$PYTHONPATH}
  /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration/test_replicas.py
}

part_deb() {
  local deb
  deb=$(bash scripts/package-deb.sh | tail -1)
  echo "package: $deb ($(du -h "$deb" | cut -f1))"
  dpkg-deb -f "$deb" Depends
  # a fresh Debian 12 root: the .deb with what it depends on and recommends, then use it
  mmdebstrap --quiet --variant=apt \
    --customize-hook="copy-in $deb /tmp" \
    --customize-hook="chroot \"\$1\" apt-get install -y -qq --install-recommends /tmp/$(basename "$deb") >/dev/null" \
    --customize-hook='chroot "$1" stagctl --local version | grep "\"version\""' \
    --customize-hook='chroot "$1" sh -c "cd / && python3 -c \"import stagd; c = stagd.connect(autostart=True); print(\\\"python client:\\\", c.daemon.binary, c.health())\""' \
    bookworm /dev/null "${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
}

part_image() {
  local tag=localhost/stagd:lavapipe name=stagd-smoke-$$ port
  bash deploy/build-image.sh --variant lavapipe --tag "$tag"
  podman image inspect "$tag" --format 'image: {{.Id}} {{.Size}} bytes, user {{.Config.User}}, entrypoint {{.Config.Entrypoint}}'
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # restricted sandboxes: the runtime may not raise nofile/nproc to the host's limits;
  # no systemd there for podman's health-check timers (run by hand below)
  podman run -d --name "$name" --network host --ulimit nofile=1024:4096 --ulimit nproc=4096:4096 \
    --health-interval disable -e STAGD_ADDR="127.0.0.1:$port" "$tag" \
    --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$mport" --log-format json 2>&1 | grep -v systemd || true
  podman container exists "$name"
  trap "podman rm -f $name >/dev/null 2>&1 || true" RETURN
  for _ in $(seq 1 100); do "$stagctl" --addr "127.0.0.1:$port" health >/dev/null 2>&1 && break; sleep 0.2; done
  "$stagctl" --addr "127.0.0.1:$port" health
  podman exec "$name" id
  podman healthcheck run "$name" >/dev/null 2>&1 || { echo "the image's health check failed" >&2; return 1; }
  echo "health check (grpc.health.v1 through stagctl in the container): healthy"
  "$stagctl" --addr "127.0.0.1:$port" devices | grep -E '"(name|description)"'
  podman logs "$name" 2>&1 | sed -n 1,3p   # sed reads it all: head would SIGPIPE podman (pipefail)
  printf '(def f (x) (+ (* x 2.0) 1.0))\n' > "/tmp/$name.sexp"
  local out
  out=$("$stagctl" --addr "127.0.0.1:$port" run "/tmp/$name.sexp" --args '[[1.0, 2.0, 3.0]]' --device vulkan:0)
  rm -f "/tmp/$name.sexp"
  echo "staged run on vulkan:0: $out"
  [ "$out" = '{"dtype":"float32","shape":[3],"data":[3.0,5.0,7.0]}' ] || { echo "a wrong result" >&2; return 1; }
  curl -fsS "http://127.0.0.1:$mport/metrics" | grep '^stagd_requests_total{method="Execute",code="OK"}'
  podman stop -t 30 "$name" >/dev/null 2>&1
  local rc
  rc=$(podman inspect "$name" --format '{{.State.ExitCode}}')
  echo "SIGTERM: exit $rc"
  [ "$rc" = 0 ]
}

# Each part runs in a process of its own, where `set -e` holds (it does not inside a
# function called as an `if` condition).
if [ "${1:-}" = --one ]; then
  "part_$2"
  exit 0
fi
status=0
for part in "${parts[@]}"; do
  case "$part" in manifests|replicas|deb|image) ;; *) echo "usage: deploy/test.sh [manifests|replicas|deb|image]..." >&2; exit 2 ;; esac
  echo "== $part"
  start=$SECONDS
  if bash "$0" --one "$part"; then
    echo "== $part: ok ($((SECONDS - start)) s)"
  else
    echo "== $part: FAILED ($((SECONDS - start)) s)"
    status=1
  fi
done
exit $status
