#!/usr/bin/env bash
# setup.sh installs what brisvox needs beyond Go: Debian packages and pinned
# native files (ONNX Runtime shared library, Silero VAD model) taken from npm
# packages. It is idempotent: a second run checks and does nothing.
#
#   setup.sh serve   what serving the keyless agent needs (go tool task run):
#                    the libraries the engine links with cgo and their
#                    headers, pocketsphinx's model, ONNX Runtime and Silero
#   setup.sh all     serve, then what the tests need on top (go tool task
#                    test): synthesizers, SIP peers, references, chromium
#                    and the browser and S3 tests' npm packages (the
#                    default)
#   setup.sh list serve|all
#                    print the Debian packages of that mode, one a line
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NATIVE="$ROOT/.native"

# --- Debian packages ---------------------------------------------------------

# What serving the keyless agent links or reads (examples/agents/local.toml).
# npm, which fetches the native files below, is a prerequisite like Go.
APT_SERVE=(
  gcc                 # cgo's C compiler (Go's images have it, a bare Debian not)
  libc6-dev           # the C library's headers, for cgo
  pkg-config          # cgo's #cgo pkg-config lines
  libopus-dev         # media/opus (libopus through hraban/opus, cgo)
  libopusfile-dev     # hraban/opus's stream reader, built in by default
  flite1-dev          # libflite headers and link libraries (providers/tts/flite, cgo)
  libpocketsphinx-dev # headers of providers/stt/pocketsphinx (cgo)
  libsphinxbase-dev
  pocketsphinx-en-us  # the acoustic model, language model and dictionary it loads
)

# What the tests need on top of APT_SERVE.
APT_TEST=(
  flite          # the flite command: the speech fixtures (scripts/fixtures.sh)
  pocketsphinx   # pocketsphinx_continuous: flite's round trip test
  espeak-ng      # the fixtures in Turkish and mixed
  sox            # the fixtures' resampling
  sip-tester     # provides sipp
  baresip        # an independent softphone for the SIP end-to-end tests
  baresip-core
  sipsak         # SIP flood and probe tool (trunk policy tests)
  sipvicious     # svmap, the scanner the trunk policy hides from
  kamailio       # the SIP load balancer in front of two nodes (deploy/kamailio, cmd/brisvox)
  libspandsp-dev # G.722 reference (media/g722's cgo cross-check)
  chromium       # the browser end-to-end test (cmd/brisvox)
  protobuf-compiler # protoc: TestGeneratedIsCurrent and the proto task (cmd/internal/fleet/operatorpb)
  postgresql     # the call records' PostgreSQL backend suite (a private server per test: internal/pgtest)
)

# --- Native files from npm ---------------------------------------------------

ORT_NPM="onnxruntime-node@1.24.3"
ORT_TGZ_SHA256="aa1bb5fa261ea68de05dd53efbba210cd7adf2d2850f4c3a201054c74cc78040"
ORT_MEMBER="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
ORT_SHA256="92ba8e44d31b80a34f5e805076a044122c3be1fffe0d88ed790de7267b0b2682"
ORT_DEST="$NATIVE/onnxruntime/libonnxruntime.so.1"

SILERO_NPM="@ricky0123/vad-web@0.0.31"
SILERO_TGZ_SHA256="d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940"
SILERO_MEMBER="package/dist/silero_vad_v5.onnx"
SILERO_SHA256="2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
SILERO_DEST="$NATIVE/models/silero_vad_v5.onnx"

log() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  fi
fi

# Everything downloaded goes below SCRATCH, removed when the script exits.
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

sha256_of() { sha256sum "$1" | awk '{print $1}'; }

# install_apt_packages PKG...
install_apt_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    log "apt: nothing to do (all $# packages installed)"
    return
  fi
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install manually: ${missing[*]}"
  log "apt: installing ${missing[*]}"
  "${SUDO[@]}" apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
  log "apt: installed ${#missing[@]} package(s)"
}

# fetch_npm_file SPEC TGZ_SHA256 MEMBER FILE_SHA256 DEST
fetch_npm_file() {
  local spec="$1" tgz_sha="$2" member="$3" file_sha="$4" dest="$5"
  local name
  name="$(basename "$dest")"

  if [ -f "$dest" ]; then
    if [ "$(sha256_of "$dest")" = "$file_sha" ]; then
      log "$name: nothing to do (present, sha256 ok)"
      return
    fi
    log "$name: sha256 mismatch on existing file, downloading again"
  fi

  command -v npm >/dev/null 2>&1 || die "npm not found; it is needed to fetch $spec"

  local tmp
  tmp="$(mktemp -d "$SCRATCH/npm.XXXXXX")"

  log "$name: npm pack $spec"
  local tgz
  tgz="$(cd "$tmp" && npm pack --silent "$spec" | tail -n 1)"
  [ -f "$tmp/$tgz" ] || die "npm pack $spec produced no tarball"

  local got
  got="$(sha256_of "$tmp/$tgz")"
  [ "$got" = "$tgz_sha" ] ||
    die "$spec tarball sha256 mismatch: want $tgz_sha, got $got"

  tar -xzf "$tmp/$tgz" -C "$tmp" "$member" ||
    die "$member not found in $spec tarball"
  got="$(sha256_of "$tmp/$member")"
  [ "$got" = "$file_sha" ] ||
    die "$name sha256 mismatch: want $file_sha, got $got (from $spec:$member)"

  mkdir -p "$(dirname "$dest")"
  mv -f "$tmp/$member" "$dest.part"
  mv -f "$dest.part" "$dest"
  log "$name: installed $dest (sha256 $file_sha)"
}

# install_npm_dir NAME PACKAGE installs the npm packages pinned by
# scripts/NAME/package-lock.json (install scripts off) into .native/NAME,
# unless PACKAGE is there from the same lock file.
install_npm_dir() {
  local name="$1" pkg="$2" src="$ROOT/scripts/$1" dest="$NATIVE/$1"
  if [ -d "$dest/node_modules/$pkg" ] && cmp -s "$src/package-lock.json" "$dest/package-lock.json"; then
    log "$name: nothing to do ($pkg installed)"
    return
  fi
  command -v npm >/dev/null 2>&1 || die "npm not found; it is needed for $pkg"
  mkdir -p "$dest"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  log "$name: npm ci ($pkg)"
  (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci in $dest failed"
  log "$name: installed $pkg into $dest"
}

# install_browser_driver installs puppeteer-core into .native/browser for
# the browser end-to-end test, which drives Debian's /usr/bin/chromium (it
# never downloads a browser).
install_browser_driver() { install_npm_dir browser puppeteer-core; }

# install_s3_server installs s3rver, a local S3-compatible server, into
# .native/s3 for the recordings' S3 backend tests (it runs on Debian's
# nodejs, which npm brings).
install_s3_server() { install_npm_dir s3 s3rver; }

write_env_file() {
  local env_file="$NATIVE/env" content
  content="$(printf 'export BRISVOX_ORT_LIB=%q\nexport BRISVOX_SILERO_MODEL=%q\n' "$ORT_DEST" "$SILERO_DEST")"
  if [ -f "$env_file" ] && [ "$(cat "$env_file")" = "$content" ]; then
    log "env: nothing to do ($env_file up to date)"
    return
  fi
  mkdir -p "$NATIVE"
  printf '%s\n' "$content" >"$env_file"
  log "env: wrote $env_file"
}

usage() {
  printf 'usage: setup.sh [serve|all]\n       setup.sh list serve|all\n' >&2
  exit 2
}

# packages_of MODE prints the Debian packages of MODE, one a line.
packages_of() {
  case "$1" in
    serve) printf '%s\n' "${APT_SERVE[@]}" ;;
    all) printf '%s\n' "${APT_SERVE[@]}" "${APT_TEST[@]}" ;;
    *) usage ;;
  esac
}

main() {
  local mode="${1:-all}"
  case "$mode" in
    list)
      [ "$#" -eq 2 ] || usage
      packages_of "$2"
      return
      ;;
    serve | all) [ "$#" -le 1 ] || usage ;;
    *) usage ;;
  esac
  local pkgs=()
  mapfile -t pkgs < <(packages_of "$mode")
  log "mode $mode"
  install_apt_packages "${pkgs[@]}"
  fetch_npm_file "$ORT_NPM" "$ORT_TGZ_SHA256" "$ORT_MEMBER" "$ORT_SHA256" "$ORT_DEST"
  fetch_npm_file "$SILERO_NPM" "$SILERO_TGZ_SHA256" "$SILERO_MEMBER" "$SILERO_SHA256" "$SILERO_DEST"
  if [ "$mode" = all ]; then
    install_browser_driver
    install_s3_server
  fi
  write_env_file
  log "done (source $NATIVE/env for BRISVOX_ORT_LIB and BRISVOX_SILERO_MODEL)"
}

main "$@"
