package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brisvox/brisvox/media"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// gapList is a comma-separated list of durations.
type gapList []time.Duration

func (g *gapList) String() string {
	parts := make([]string, len(*g))
	for i, d := range *g {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

func (g *gapList) Set(s string) error {
	*g = nil
	for part := range strings.SplitSeq(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("gap %v is not positive", d)
		}
		*g = append(*g, d)
	}
	return nil
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("brisvox-fixtures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	plan := fs.String("plan", "", "TSV of utterances: language, WAV path, text")
	out := fs.String("out", "", "fixture WAV to write; the sidecar gets the same name with .json")
	language := fs.String("language", "", "the fixture's language: en, tr or mixed")
	rate := fs.Int("rate", 16000, "sample rate every utterance must have")
	lead := fs.Duration("lead", 500*time.Millisecond, "digital silence before the first utterance")
	trail := fs.Duration("trail", time.Second, "digital silence after the last utterance")
	gaps := gapList{800 * time.Millisecond, 1000 * time.Millisecond, 1200 * time.Millisecond}
	fs.Var(&gaps, "gaps", "digital silences between utterances, used in turn")
	threshold := fs.Float64("threshold", 0.01, "fraction of full scale above which a sample is audio")
	maxPause := fs.Duration("max-pause", 250*time.Millisecond, "refuse an utterance pausing this long inside")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *plan == "" || *out == "" || *language == "" || fs.NArg() != 0 || *threshold <= 0 || *threshold >= 1 {
		fmt.Fprintln(stderr, "usage: brisvox-fixtures -plan plan.tsv -out name.wav -language en|tr|mixed [-threshold 0.01]")
		return 2
	}
	utts, err := readPlan(*plan, *rate)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-fixtures:", err)
		return 1
	}
	l := Layout{Rate: *rate, Lead: *lead, Trail: *trail, Gaps: gaps,
		Threshold: int16(*threshold * 32768), MaxPause: *maxPause}
	samples, sc, err := Compose(utts, l, *language)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-fixtures:", err)
		return 1
	}
	if err := writeFixture(*out, samples, sc); err != nil {
		fmt.Fprintln(stderr, "brisvox-fixtures:", err)
		return 1
	}
	return 0
}

// readPlan reads the plan's utterances and their audio, which must be mono
// at rate.
func readPlan(path string, rate int) ([]Utterance, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var utts []Utterance
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) != 3 {
			return nil, fmt.Errorf("%w: %s:%d: want language, path and text separated by tabs", errFixture, path, n)
		}
		w, err := readMono(fields[1], rate)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		utts = append(utts, Utterance{Language: fields[0], Text: fields[2], Samples: w})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return utts, nil
}

func readMono(path string, rate int) ([]int16, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, err := media.ReadWAV(f, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if w.Rate != rate || w.Channels != 1 || w.Truncated {
		return nil, fmt.Errorf("%w: %s: %d Hz, %d channels, truncated %v (want %d Hz mono; resample with sox)", errFixture, path, w.Rate, w.Channels, w.Truncated, rate)
	}
	return w.Samples, nil
}

// writeFixture writes name.wav and name.json, each through a temporary file
// renamed into place, the WAV last so that a present WAV means a complete
// pair.
func writeFixture(wavPath string, samples []int16, sc Sidecar) error {
	var wav bytes.Buffer
	if err := media.WriteWAV(&wav, sc.Rate, samples); err != nil {
		return err
	}
	js, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return err
	}
	jsonPath := strings.TrimSuffix(wavPath, filepath.Ext(wavPath)) + ".json"
	if err := writeAtomic(jsonPath, append(js, '\n')); err != nil {
		return err
	}
	return writeAtomic(wavPath, wav.Bytes())
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".part"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
