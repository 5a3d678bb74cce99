#!/usr/bin/env bash
# Prints the local operator token, making it once: 32 random bytes as hex
# in .native/operator-token, readable by its owner only. `go tool task run`
# serves with it and `go tool task calls` uses it; a deployment takes its
# token from its own secret store instead (docs/OPERATIONS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
f=.native/operator-token
if [ ! -s "$f" ]; then
  mkdir -p .native
  umask 077
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$f.tmp"
  mv "$f.tmp" "$f"
fi
cat "$f"
