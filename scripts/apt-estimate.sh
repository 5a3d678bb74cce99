#!/usr/bin/env bash
# apt-estimate.sh estimates what apt would download to install a mode of
# setup.sh on a machine that has only a Debian minimal base (the packages
# of priority required, and apt, with their dependencies), plus EXTRA...
# (e.g. what Go's Debian images add: gcc libc6-dev make pkg-config
# ca-certificates curl git wget gnupg netbase procps openssh-client). It asks
# apt's resolver (apt-get -s) against a dpkg status file made of this
# machine's own entries for those packages, so it runs on a Debian machine
# that has them installed, and it downloads nothing. It prints one line:
# the packages apt would install and the sum of their .deb sizes
# (apt-cache show). An estimate: the archive's versions of today, nothing
# unpacked or configured.
#
#   bash scripts/apt-estimate.sh serve|all [EXTRA...]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE="${1:?usage: apt-estimate.sh serve|all [EXTRA...]}"
shift

die() { printf 'apt-estimate: ERROR: %s\n' "$*" >&2; exit 1; }
for tool in apt-get apt-cache python3; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mapfile -t pkgs < <(bash "$ROOT/scripts/setup.sh" list "$MODE")

# The base: every package of priority required, apt, and EXTRA.
apt-cache dumpavail |
  awk 'BEGIN { RS = "" } /\nPriority: required/ { match($0, /^Package: [^\n]+/); print substr($0, 10, RLENGTH - 9) }' |
  sort -u >"$work/roots"
printf '%s\n' apt "$@" >>"$work/roots"

# The base's dpkg status: those packages' entries on this machine, closed
# over their Depends and Pre-Depends (the first alternative installed).
python3 - "$work/roots" "$work/status" <<'EOF'
import re, sys
entries, provides = {}, {}
for stanza in open("/var/lib/dpkg/status").read().split("\n\n"):
    m = re.search(r"^Package: (\S+)", stanza, re.M)
    if not m or "Status: install ok installed" not in stanza:
        continue
    entries[m.group(1)] = stanza
for name, stanza in entries.items():
    m = re.search(r"^Provides: (.*)$", stanza, re.M)
    for p in (m.group(1).split(",") if m else []):
        provides.setdefault(p.strip().split()[0], name)
roots = [l.strip() for l in open(sys.argv[1]) if l.strip()]
todo, seen = [r for r in roots if r in entries], set()
while todo:
    name = todo.pop()
    if name in seen:
        continue
    seen.add(name)
    for field in ("Depends", "Pre-Depends"):
        m = re.search(r"^%s: (.*)$" % field, entries[name], re.M)
        for alt in (m.group(1).split(",") if m else []):
            for o in (a.strip().split()[0].split(":")[0] for a in alt.split("|")):
                if o in entries:
                    todo.append(o)
                    break
                if o in provides:
                    todo.append(provides[o])
                    break
open(sys.argv[2], "w").write("\n\n".join(entries[n] for n in sorted(seen)) + "\n\n")
EOF

apt-get -s -o Dir::State::status="$work/status" -o Debug::NoLocking=1 \
  install --no-install-recommends "${pkgs[@]}" 2>/dev/null |
  awk '/^Inst / { v = $3; if (v ~ /^\[/) v = $4; gsub(/[()]/, "", v); print $2 "=" v }' >"$work/inst"

total=0
while read -r pv; do
  size="$(apt-cache show "$pv" 2>/dev/null | awk '/^Size:/ { print $2; exit }')"
  [ -n "$size" ] || die "no size for $pv"
  total=$((total + size))
done <"$work/inst"
printf 'apt-estimate: %s on a base of %d packages%s: %d packages, %.1f MB\n' "$MODE" \
  "$(grep -c '^Package:' "$work/status")" "${*:+ (with $*)}" "$(wc -l <"$work/inst")" \
  "$(awk -v t="$total" 'BEGIN { print t / 1e6 }')"
