#!/usr/bin/env bash
# fixtures.sh generates the speech fixtures of the VAD tests into
# .native/fixtures/ (ignored by git): 16 kHz mono 16-bit WAVs of real
# synthesized speech, English (flite), Turkish (espeak-ng) and a mix of both
# (espeak-ng), each with a sidecar JSON of ground-truth segments. The
# synthesizers speak each utterance, sox resamples it, and
# cmd/brisvox-fixtures trims it to its audio, lays the utterances out with
# known digital-silence gaps and computes the segments from the samples.
#
# Idempotent: when every output is present and the stamp holds the sha256
# of this script, of the generator's Go sources and the tools' versions, it
# does nothing. Needs flite, espeak-ng, sox (scripts/setup.sh installs them)
# and go.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/.native/fixtures"
STAMP="$OUT/.stamp"
NAMES=(en tr mixed)

log() { printf 'fixtures: %s\n' "$*"; }
die() { printf 'fixtures: ERROR: %s\n' "$*" >&2; exit 1; }

for tool in flite espeak-ng sox go sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found (run: go tool task setup)"
done

# Utterances. No commas or sentence breaks inside one: the ground truth is
# one segment per utterance, and the generator refuses an utterance that
# pauses 250 ms or more inside.
EN=(
  "Please call me back tomorrow morning"
  "My booking number is four two seven"
  "The train leaves at half past nine"
)
TR=(
  "Yarın sabah beni arayın lütfen"
  "Rezervasyon numaram dört iki yedi"
  "Tren dokuzu buçuk geçe kalkıyor"
)

stamp_content() {
  (
    cd "$ROOT"
    sha256sum scripts/fixtures.sh cmd/brisvox-fixtures/*.go media/wav.go
    espeak-ng --version
    flite --version || true # flite exits 1 after printing it
    sox --version
  )
}

up_to_date() {
  local name
  [ -f "$STAMP" ] || return 1
  for name in "${NAMES[@]}"; do
    [ -f "$OUT/$name.wav" ] && [ -f "$OUT/$name.json" ] || return 1
  done
  [ "$(cat "$STAMP")" = "$(stamp_content)" ]
}

if up_to_date; then
  log "nothing to do (${NAMES[*]} present in $OUT, stamp matches)"
  exit 0
fi

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

mkdir -p "$OUT"
rm -f "$STAMP"

log "building cmd/brisvox-fixtures"
(cd "$ROOT" && go build -o "$SCRATCH/brisvox-fixtures" ./cmd/brisvox-fixtures)

n=0
# say ENGINE LANGUAGE TEXT PLAN: speaks TEXT, resamples it to 16 kHz mono
# 16-bit (no dither, so the output is repeatable; -G guards against
# clipping in the resampler) and adds it to PLAN.
say() {
  local engine="$1" lang="$2" text="$3" plan="$4"
  n=$((n + 1))
  local raw="$SCRATCH/raw$n.wav" wav="$SCRATCH/utt$n.wav"
  case "$engine" in
    flite) flite -voice slt -t "$text" -o "$raw" ;;
    espeak-ng) espeak-ng -v "$lang" -w "$raw" "$text" ;;
    *) die "unknown engine $engine" ;;
  esac
  sox -D -G -q "$raw" -r 16000 -c 1 -b 16 "$wav"
  printf '%s\t%s\t%s\n' "$lang" "$wav" "$text" >>"$plan"
}

compose() {
  local name="$1" lang="$2"
  "$SCRATCH/brisvox-fixtures" -plan "$SCRATCH/$name.tsv" -out "$OUT/$name.wav" -language "$lang" ||
    die "composing $name failed"
  log "wrote $OUT/$name.wav and $name.json"
}

for text in "${EN[@]}"; do say flite en "$text" "$SCRATCH/en.tsv"; done
compose en en

for text in "${TR[@]}"; do say espeak-ng tr "$text" "$SCRATCH/tr.tsv"; done
compose tr tr

for i in "${!EN[@]}"; do
  say espeak-ng en "${EN[$i]}" "$SCRATCH/mixed.tsv"
  say espeak-ng tr "${TR[$i]}" "$SCRATCH/mixed.tsv"
done
compose mixed mixed

stamp_content >"$STAMP"
log "done (stamp $STAMP)"
