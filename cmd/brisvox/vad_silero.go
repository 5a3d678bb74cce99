package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/silero"
)

// sileroEngine runs Silero VAD v5 (media/silero) and the speech gate
// (media.SpeechGate, defaults) over a file: at 8 or 16 kHz directly, at 24
// and 48 kHz after resampling to 16 kHz (the resampler's delay is taken
// off the marks). The ONNX Runtime library and the model are found as
// media/silero.LocateFiles says; a missing one is an error naming it and
// the setup command.
type sileroEngine struct{}

var _ vadEngine = sileroEngine{}

func (sileroEngine) Segments(pcm []int16, rate int) ([]vadSegment, error) {
	modelRate := 16000
	if rate == 8000 {
		modelRate = 8000
	}
	var shift time.Duration
	if rate != modelRate {
		rs, err := media.NewResampler(rate, modelRate, media.ResamplerConfig{})
		if err != nil {
			return nil, err
		}
		out := make([]int16, rs.MaxOutLen(len(pcm))+rs.MaxOutLen(rs.TapsPerPhase()))
		n, _ := rs.Process(out, pcm)
		m, _ := rs.Process(out[n:], make([]int16, rs.TapsPerPhase()))
		pcm = out[:n+m]
		shift = time.Duration(rs.Delay() * float64(time.Second) / float64(modelRate))
	}
	model, err := silero.NewModel(silero.ModelConfig{SampleRate: modelRate, MaxBatch: 1})
	if err != nil {
		return nil, err
	}
	defer model.Close()
	gate, err := media.NewSpeechGate(media.SpeechGateConfig{})
	if err != nil {
		return nil, err
	}
	stream, err := silero.NewStream(modelRate)
	if err != nil {
		return nil, err
	}
	win := model.WindowSize()
	winDur := time.Duration(win) * time.Second / time.Duration(modelRate)
	var origin time.Time
	probs := make([]float32, 1)
	var segs []vadSegment
	open := false
	var start time.Time
	step := func(w []int16, off int) error {
		if err := model.Run([]*silero.Stream{stream}, [][]int16{w}, probs); err != nil {
			return err
		}
		at := origin.Add(time.Duration(off)*time.Second/time.Duration(modelRate) - shift)
		ev, ts := gate.Process(probs[0], at, winDur)
		switch ev {
		case media.VADStart:
			open, start = true, ts
		case media.VADStop:
			segs = append(segs, vadSegment{StartMS: max(start.Sub(origin), 0).Milliseconds(), EndMS: max(ts.Sub(origin), 0).Milliseconds()})
			open = false
		}
		return nil
	}
	off := 0
	for ; off+win <= len(pcm); off += win {
		if err := step(pcm[off:off+win], off); err != nil {
			return nil, fmt.Errorf("silero: %w", err)
		}
	}
	// The last partial window and then silence until the gate stops (its
	// hangover); the bound only keeps a gate that never stops from looping.
	tail := make([]int16, win)
	copy(tail, pcm[off:])
	for i := 0; (i == 0 && off < len(pcm)) || (open && i < 1000); i, off = i+1, off+win {
		if err := step(tail, off); err != nil {
			return nil, fmt.Errorf("silero: %w", err)
		}
		clear(tail)
	}
	if open {
		return nil, errors.New("silero engine: the gate did not stop on silence")
	}
	return segs, nil
}
