#!/usr/bin/env bash
# first-run.sh measures the lean start: the time from `git clone` of a
# checkout to the keyless agent's /readyz answering 200 under
# `go tool task run`, as on a fresh machine, with a cold Go build cache,
# Go module cache and npm cache of their own. The Debian packages are taken
# as installed (`bash scripts/setup.sh list serve` names them; apt's share
# is not measured here).
#
#   bash scripts/first-run.sh [RUNS] [SOURCE]
#
# RUNS (default 1) runs one after the other; SOURCE (default this checkout)
# is what is cloned, at its HEAD. Each run prints one line of seconds since
# the clone began: the clone done, the task runner started (its modules
# fetched and built), setup:serve done (the native files fetched from npm),
# the serving binary started (the engine's modules fetched, brisvox built),
# /readyz 200; then the server is stopped with SIGTERM and waited
# for, and everything the run made is removed. The line ends with the CPU
# seconds the task and everything it ran used (user+sys, bash's times: a
# figure the other load of the machine moves much less than the wall) and
# the 1-minute load average at the start and at /readyz. Serving listens on
# a free loopback port, SIP on port 0.
set -euo pipefail

RUNS="${1:-1}"
SOURCE="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"

die() { printf 'first-run: ERROR: %s\n' "$*" >&2; exit 1; }
for tool in git go npm curl python3 setsid; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# cpu_seconds FILE: user+sys of the children from the output of bash's
# times (its second line, "XmY.YYYs XmY.YYYs").
cpu_seconds() {
  sed -n 2p "$1" 2>/dev/null | awk '{
    t = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
    printf "%.0f", t
  }'
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# stamp_lines LOG: copies its input to LOG, each line after the seconds
# since the epoch at which it arrived.
stamp_lines() {
  local line
  while IFS= read -r line; do
    printf '%s %s\n' "$(now)" "$line"
  done >"$1"
}

# first_at LOG PATTERN: the arrival time of LOG's first line matching PATTERN.
first_at() { grep -m1 -- "$2" "$1" | awk '{print $1}'; }

one_run() {
  local n="$1" work pid port t0 t_clone t_ready code=000 deadline load0 load_ready
  work="$(mktemp -d)"
  port="$(free_port)"
  load0="$(load1)"
  t0="$(now)"
  git clone -q "$SOURCE" "$work/clone"
  t_clone="$(now)"
  mkdir -p "$work/gocache" "$work/gomodcache" "$work/npmcache" "$work/tmp"
  (
    cd "$work/clone"
    export GOCACHE="$work/gocache" GOMODCACHE="$work/gomodcache" GOFLAGS=-modcacherw
    export npm_config_cache="$work/npmcache" TMPDIR="$work/tmp"
    # The wrapper outlives the signal (a handler, not an ignore, so the
    # task inherits the default) to count its children's CPU.
    exec setsid bash -c 'trap : TERM; go tool task run -- --addr "127.0.0.1:$1" --sip-addr 127.0.0.1:0; times >"$2"' \
      first-run "$port" "$work/cpu"
  ) > >(stamp_lines "$work/out.log") 2>&1 &
  pid=$!
  deadline=$(($(date +%s) + 900))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/readyz" || true)"
    [ "$code" = 200 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  t_ready="$(now)"
  load_ready="$(load1)"
  # setsid made the task runner a process group leader: SIGTERM goes to
  # the group, as a terminal's signal would.
  kill -TERM -- "-$pid" 2>/dev/null || true
  wait "$pid" || true
  # The group's last member (the server, draining) may outlive the runner.
  local waited=0
  while kill -0 -- "-$pid" 2>/dev/null && [ "$waited" -lt 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  sleep 0.5 # the stamping reader writes the last lines
  if [ "$code" != 200 ]; then
    cat "$work/out.log" >&2
    rm -rf "$work"
    die "run $n: /readyz never answered 200 (last: $code)"
  fi
  local t_task t_setup t_started
  t_task="$(first_at "$work/out.log" 'setup: mode')"
  t_setup="$(first_at "$work/out.log" 'setup: done')"
  t_started="$(first_at "$work/out.log" 'brisvox: capacity')"
  printf 'run %d: clone %ss, task runner started %ss, setup:serve done %ss, brisvox started %ss, /readyz 200 %ss' \
    "$n" "$(since "$t0" "$t_clone")" "$(since "$t0" "$t_task")" "$(since "$t0" "$t_setup")" \
    "$(since "$t0" "$t_started")" "$(since "$t0" "$t_ready")"
  if grep -q 'brisvox: stopped' "$work/out.log"; then
    printf ' (stopped cleanly)'
  else
    printf ' (no "brisvox: stopped" line after SIGTERM)'
  fi
  printf '; cpu %ss; load %s -> %s\n' "$(cpu_seconds "$work/cpu")" "$load0" "$load_ready"
  rm -rf "$work"
}

printf 'first-run: %s at %s, %s, %d cores, go %s\n' "$SOURCE" \
  "$(git -C "$SOURCE" rev-parse --short HEAD)" "$(date -u +%Y-%m-%dT%H:%MZ)" \
  "$(nproc)" "$(go env GOVERSION)"
for i in $(seq 1 "$RUNS"); do
  one_run "$i"
done
