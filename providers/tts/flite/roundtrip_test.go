//go:build cgo

package flite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// writeWAV writes pcm as a 16-bit mono WAV file.
func writeWAV(t *testing.T, path string, pcm []int16, rate int) {
	t.Helper()
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	_ = binary.Write(&b, le, uint32(36+2*len(pcm)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		_ = binary.Write(&b, le, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, le, uint32(2*len(pcm)))
	_ = binary.Write(&b, le, pcm)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// heard is a word pocketsphinx recognized and where it starts.
type heard struct {
	word  string
	start time.Duration
}

// recognize runs pocketsphinx_continuous with word times on a WAV file.
// Its word lines are "word(variant) start end confidence"; fillers (<s>,
// <sil>, [NOISE]) are left out.
func recognize(t *testing.T, bin, wav string) []heard {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-infile", wav, "-logfn", os.DevNull, "-time", "yes").Output()
	if err != nil {
		t.Fatalf("pocketsphinx_continuous: %v", err)
	}
	var hs []heard
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || strings.ContainsAny(f[0][:1], "<[") {
			continue
		}
		sec, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		w, _, _ := strings.Cut(f[0], "(")
		hs = append(hs, heard{word: w, start: time.Duration(sec * float64(time.Second))})
	}
	return hs
}

// normalize is a word as the recognizer spells it: lower case, letters and
// apostrophes only.
func normalize(w string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r == '\'':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, w)
}

// TestRoundTripThroughPocketsphinx speaks a context pushed in pieces,
// writes its audio to a WAV file and has pocketsphinx recognize it: 70%
// of the words must come back in order (measured: 17 of 22, the same
// every run since the audio is deterministic; the flite CLI on the whole
// text gets 17 too), and where a word comes back, our Word
// offset must be within 150 ms of where the recognizer heard it start.
// Mutations caught: offsets taken from the end of a word's first segment
// instead of its start, or not shifted by the trimmed lead (each more
// than 150 ms off for some word).
func TestRoundTripThroughPocketsphinx(t *testing.T) {
	bin, err := exec.LookPath("pocketsphinx_continuous")
	if err != nil {
		t.Skip("pocketsphinx_continuous is not installed (Debian package pocketsphinx): round trip skipped")
	}
	e := newEngine(t, Config{})
	s := connect(t, e)
	text := "Good morning, and thank you for calling. Your order will arrive on Tuesday. Is there anything else I can help you with?"
	for _, p := range []string{"Good morning, and thank you for cal", "ling. Your order will arrive on Tuesday. ", "Is there anything else I can help you with?"} {
		if err := s.Push("rt", p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush("rt"); err != nil {
		t.Fatal(err)
	}
	sp := readContext(t, s, "rt", e.Rate())
	checkWords(t, sp, text, e.Rate(), e.Config().Chunk)
	var pcm []int16
	for _, ev := range sp.events {
		if ev.Kind == providers.TTSAudio {
			pcm = append(pcm, ev.PCM...)
		}
	}
	wav := filepath.Join(t.TempDir(), "rt.wav")
	writeWAV(t, wav, pcm, e.Rate())
	hs := recognize(t, bin, wav)

	// Match the recognized words to ours in order (longest common
	// subsequence), then compare the start times of the matches.
	ours := make([]string, len(sp.words))
	for i, w := range sp.words {
		ours[i] = normalize(w)
	}
	n, m := len(ours), len(hs)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ours[i] == hs[j].word {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	matched := 0
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case ours[i] == hs[j].word:
			matched++
			if d := (sp.offsets[i] - hs[j].start).Abs(); d > 150*time.Millisecond {
				t.Errorf("%q: our offset %v, heard at %v", ours[i], sp.offsets[i], hs[j].start)
			}
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	var got []string
	for _, h := range hs {
		got = append(got, h.word)
	}
	t.Logf("heard %q: %d of %d words", strings.Join(got, " "), matched, n)
	if matched*10 < n*7 {
		t.Errorf("only %d of %d words came back: %q", matched, n, strings.Join(got, " "))
	}
}
