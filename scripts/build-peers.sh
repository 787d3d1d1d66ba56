#!/usr/bin/env bash
# Builds the real servers the peer tests start on loopback, from their Go modules, once per machine:
#   kube-apiserver (k8s.io/kubernetes) with leader-election (client-go's leaderelection on a Lease),
#   etcd (go.etcd.io/etcd/server/v3), Prometheus 3 and promtool (github.com/prometheus/prometheus,
#   without the web UI and without service discovery plugins) with native-reference (client_golang's
#   native histograms and expfmt's protobuf decoder, scripts/peers/prometheus/native-reference).
# Each lands in $PEERS_DIR/<name>-<version>/ (default ~/.cache/controller-introspection/peers) and is
# reused while that folder holds it. Prints the path of each binary. Needs Go (/usr/local/go/bin) and
# the Go module proxy. Usage: bash scripts/build-peers.sh [kube-apiserver|etcd|prometheus ...]
set -euo pipefail
cd "$(dirname "$0")/peers"
export PATH="/usr/local/go/bin:$PATH" GOTOOLCHAIN=local GOFLAGS=-mod=mod
peers_dir="${PEERS_DIR:-$HOME/.cache/controller-introspection/peers}"
names=("$@")
[ "${#names[@]}" -gt 0 ] || names=(etcd kube-apiserver prometheus)

# The version a module pins, from its go.mod: `module version`.
pinned() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) { print ($1 == "require" ? $3 : $2); exit }' "$1/go.mod"; }

build() {
  local name="$1" version="$2" tags="$3"
  shift 3
  local out="$peers_dir/$name-$version"
  local missing=0
  for pkg in "$@"; do [ -x "$out/$(basename "$pkg")" ] || missing=1; done
  if [ "$missing" = 1 ]; then
    local started=$SECONDS
    mkdir -p "$out.tmp"
    (cd "$name" && go build -trimpath -tags "$tags" -o "$out.tmp/" "$@")
    rm -rf "$out" && mv "$out.tmp" "$out"
    echo "build-peers: built $name $version in $((SECONDS - started)) s ($(du -sh "$out" | cut -f1))" >&2
  fi
  for pkg in "$@"; do echo "$out/$(basename "$pkg")"; done
}

for name in "${names[@]}"; do
  case "$name" in
  kube-apiserver)
    # leader-election: client-go's own leaderelection on a Lease, beside which the package's elector
    # is measured (bench/takeover.js) and which __tests__/kubernetes/takeover.test.ts runs.
    build kube-apiserver "$(pinned kube-apiserver k8s.io/kubernetes)" "" \
      k8s.io/kubernetes/cmd/kube-apiserver controller-introspection.test/peers/kube-apiserver/leader-election
    ;;
  etcd) build etcd "$(pinned etcd go.etcd.io/etcd/server/v3)" "" controller-introspection.test/peers/etcd ;;
  prometheus)
    # native-reference: client_golang's native histograms and expfmt's protobuf decoder, which the
    # protobuf exposition tests compare with (__tests__/metrics/native-histogram.test.ts,
    # __tests__/metrics/exposition/protobuf.test.ts).
    build prometheus "$(pinned prometheus github.com/prometheus/prometheus)" remove_all_sd \
      github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool \
      controller-introspection.test/peers/prometheus/native-reference
    ;;
  *)
    echo "build-peers: unknown peer $name (kube-apiserver, etcd, prometheus)" >&2
    exit 2
    ;;
  esac
done
