package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/brisvox/brisvox/media"
)

// vadFileLimit bounds what `brisvox vad` reads of a file: 512 MiB, about 46
// minutes of 48 kHz stereo 16-bit audio.
const vadFileLimit int64 = 512 << 20

// vadFrame is the frame length the engines run at, at any rate.
const vadFrame = 20 * time.Millisecond

// vadSegment is one stretch of speech, in milliseconds from the start of
// the file, as printed (one JSON object per line).
type vadSegment struct {
	StartMS int64 `json:"start_ms"`
	EndMS   int64 `json:"end_ms"`
}

// vadEngine finds the speech in mono 16-bit PCM at a sample rate the
// command accepts (8, 16, 24 or 48 kHz).
type vadEngine interface {
	Segments(pcm []int16, rate int) ([]vadSegment, error)
}

var (
	errUnknownEngine   = errors.New("unknown engine")
	errUnsupportedRate = errors.New("unsupported sample rate")
)

// newVADEngine makes the engine named on the command line; adding an
// engine is one case here and its constructor.
func newVADEngine(name string) (vadEngine, error) {
	switch name {
	case "energy":
		return newEnergyEngine(vadFrame)
	case "silero":
		return sileroEngine{}, nil
	}
	return nil, fmt.Errorf("%w %q (want energy or silero)", errUnknownEngine, name)
}

// vadCommand runs `brisvox vad [--engine energy|silero] FILE.wav`. Flags
// may come before or after the file. Exit status 2 for usage, 1 for a file
// it cannot read or an engine it cannot run.
func vadCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vad", flag.ContinueOnError)
	fs.SetOutput(stderr)
	engineName := fs.String("engine", "energy", "voice activity detector: energy or silero")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: brisvox vad [--engine energy|silero] FILE.wav")
		fmt.Fprintln(stderr, "prints the speech segments of a PCM WAV (8, 16, 24 or 48 kHz, mono or stereo) as JSON lines {\"start_ms\":..., \"end_ms\":...}")
		fs.PrintDefaults()
	}
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 1 {
		fs.Usage()
		return 2
	}
	engine, err := newVADEngine(*engineName)
	if errors.Is(err, errUnknownEngine) {
		fmt.Fprintln(stderr, "brisvox vad:", err)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "brisvox vad:", err)
		return 1
	}
	segs, err := vadFile(files[0], engine, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox vad:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	for _, s := range segs {
		if err := enc.Encode(s); err != nil {
			fmt.Fprintln(stderr, "brisvox vad:", err)
			return 1
		}
	}
	return 0
}

// vadFile reads the WAV at path and runs the engine over it.
func vadFile(path string, engine vadEngine, stderr io.Writer) ([]vadSegment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, err := media.ReadWAV(f, vadFileLimit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch w.Rate {
	case 8000, 16000, 24000, 48000:
	default:
		return nil, fmt.Errorf("%s: %w %d Hz (want 8000, 16000, 24000 or 48000)", path, errUnsupportedRate, w.Rate)
	}
	if w.Truncated {
		fmt.Fprintf(stderr, "brisvox vad: warning: %s is truncated; using the %v of audio it holds\n", path, w.Duration())
	}
	return engine.Segments(w.Samples, w.Rate)
}

// energyEngine runs media.EnergyVAD with its defaults over frames of a
// fixed length at the file's own rate.
type energyEngine struct {
	frame time.Duration
}

var _ vadEngine = energyEngine{}

func newEnergyEngine(frame time.Duration) (energyEngine, error) {
	if frame <= 0 {
		return energyEngine{}, fmt.Errorf("energy engine: frame %v", frame)
	}
	return energyEngine{frame: frame}, nil
}

// Segments pairs the detector's start and stop events; speech still open
// at the end of the file is closed by feeding silence until the detector
// stops, so its stop is dated like any other (the end of the last speech
// frame).
func (e energyEngine) Segments(pcm []int16, rate int) ([]vadSegment, error) {
	v, err := media.NewEnergyVAD(media.EnergyVADConfig{})
	if err != nil {
		return nil, err
	}
	n := int(e.frame * time.Duration(rate) / time.Second)
	if n <= 0 {
		return nil, fmt.Errorf("%w %d Hz for %v frames", errUnsupportedRate, rate, e.frame)
	}
	var origin time.Time
	at := func(sample int) time.Time {
		return origin.Add(time.Duration(sample) * time.Second / time.Duration(rate))
	}
	var segs []vadSegment
	open := false
	var start time.Time
	feed := func(frame []int16, off int) {
		ev, ts := v.Process(frame, at(off), at(off+len(frame)).Sub(at(off)))
		switch ev {
		case media.VADStart:
			open, start = true, ts
		case media.VADStop:
			segs = append(segs, vadSegment{StartMS: start.Sub(origin).Milliseconds(), EndMS: ts.Sub(origin).Milliseconds()})
			open = false
		}
	}
	for off := 0; off < len(pcm); off += n {
		feed(pcm[off:min(off+n, len(pcm))], off)
	}
	// The detector stops after its 300 ms hangover; the bound only keeps a
	// detector that never stops from looping.
	quiet := make([]int16, n)
	for off, i := len(pcm), 0; open && i < 1000; off, i = off+n, i+1 {
		feed(quiet, off)
	}
	if open {
		return nil, errors.New("energy engine: the detector did not stop on silence")
	}
	return segs, nil
}
