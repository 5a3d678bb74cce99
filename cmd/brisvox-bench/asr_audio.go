package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/brisvox/brisvox/media"
)

// The voices: three flite voices (its CLI, 16 kHz as made) and espeak-ng
// (US English, 22.05 kHz, resampled to 16 kHz by sox).
const voiceEspeak = "espeak"

var asrVoices = []string{"slt", "rms", "awb", voiceEspeak}

// The paths from the speaker to the recognizer.
const (
	// path16k is the voice's 16 kHz audio as made.
	path16k = "16k"
	// pathMulaw is what a G.711 call gives the recognizer: 16 kHz to
	// 8 kHz mu-law and back to 16 kHz (sox, no dither).
	pathMulaw = "mulaw8k"
)

var asrPaths = []string{path16k, pathMulaw}

// asrRate is the recognizer's rate.
const asrRate = 16000

// asrTools are the programs the voices and paths need, by name.
func asrTools(voices, paths []string) []string {
	need := map[string]bool{}
	for _, v := range voices {
		if v == voiceEspeak {
			need["espeak-ng"], need["sox"] = true, true
		} else {
			need["flite"] = true
		}
	}
	for _, p := range paths {
		if p == pathMulaw {
			need["sox"] = true
		}
	}
	var out []string
	for _, t := range []string{"flite", "espeak-ng", "sox"} {
		if need[t] {
			out = append(out, t)
		}
	}
	return out
}

// checkTools fails, naming each program missing from PATH, with
// ErrToolMissing.
func checkTools(tools []string) error {
	var missing []string
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		// The Debian packages are named as their programs.
		return fmt.Errorf("%w: %s not in PATH (Debian: apt-get install %s; `go tool task setup` installs them)",
			ErrToolMissing, strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	return nil
}

// audioCache makes and keeps the 16 kHz audio of an utterance said by a
// voice through a path, one WAV file a key in dir. The tools are
// deterministic, so a file made once is the file made again.
type audioCache struct{ dir string }

// cacheVersion changes when the way the audio is made changes.
const cacheVersion = "asr-audio-1"

func (c audioCache) file(voice, path, text string) string {
	h := sha256.Sum256([]byte(cacheVersion + "\x00" + voice + "\x00" + path + "\x00" + text))
	return filepath.Join(c.dir, fmt.Sprintf("%s-%s-%s.wav", voice, path, hex.EncodeToString(h[:8])))
}

// audio returns the utterance's 16 kHz samples, made (and cached) when
// the cache has none.
func (c audioCache) audio(ctx context.Context, voice, path, text string) ([]int16, error) {
	name := c.file(voice, path, text)
	if _, err := os.Stat(name); err != nil {
		if err := c.make(ctx, voice, path, text, name); err != nil {
			return nil, err
		}
	}
	return readWAV16k(name)
}

// make writes the file name: the voice's 16 kHz audio, then the path.
// Files are written under a temporary name and renamed, so a run stopped
// half-way leaves no partial file behind a key.
func (c audioCache) make(ctx context.Context, voice, path, text, name string) error {
	tmp, err := os.MkdirTemp(c.dir, "make-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSynthesis, err)
	}
	defer os.RemoveAll(tmp)
	wide := filepath.Join(tmp, "16k.wav")
	switch voice {
	case voiceEspeak:
		raw := filepath.Join(tmp, "espeak.wav")
		if err := runTool(ctx, "espeak-ng", "-v", "en-us", "-w", raw, text); err != nil {
			return err
		}
		if err := runTool(ctx, "sox", "-R", "-D", raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", wide); err != nil {
			return err
		}
	default:
		if err := runTool(ctx, "flite", "-voice", voice, "-t", text, "-o", wide); err != nil {
			return err
		}
	}
	out := wide
	if path == pathMulaw {
		narrow := filepath.Join(tmp, "mulaw8k.wav")
		if err := runTool(ctx, "sox", "-R", "-D", wide, "-r", "8000", "-c", "1", "-e", "u-law", "-b", "8", narrow); err != nil {
			return err
		}
		out = filepath.Join(tmp, "back16k.wav")
		if err := runTool(ctx, "sox", "-R", "-D", narrow, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out); err != nil {
			return err
		}
	}
	if _, err := readWAV16k(out); err != nil {
		return err
	}
	if err := os.Rename(out, name); err != nil {
		return fmt.Errorf("%w: %v", ErrSynthesis, err)
	}
	return nil
}

// runTool runs a program, its stderr kept for the error.
func runTool(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s: %v: %s", ErrSynthesis, name, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// readWAV16k reads a mono 16 kHz WAV file.
func readWAV16k(name string) ([]int16, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSynthesis, err)
	}
	defer f.Close()
	w, err := media.ReadWAV(f, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSynthesis, name, err)
	}
	if w.Rate != asrRate || w.Channels != 1 || len(w.Samples) == 0 {
		return nil, fmt.Errorf("%w: %s: %d Hz, %d channels, %d samples (want mono 16 kHz audio)", ErrSynthesis, name, w.Rate, w.Channels, len(w.Samples))
	}
	return w.Samples, nil
}
