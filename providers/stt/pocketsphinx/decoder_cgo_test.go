//go:build cgo

package pocketsphinx

import (
	"errors"
	"testing"
	"testing/synctest"
)

// TestDecoderGuardsItsState: audio or an end outside an utterance, and a
// second start, are ErrDecode. libpocketsphinx itself takes audio outside
// an utterance without an error, and on speech asserts (seen with the
// session's restart removed: SIGABRT in ngram_search_fwdtree.c aborts the
// whole process).
// Mutation caught: the inUtterance guard of process removed (the silence
// here is accepted).
func TestDecoderGuardsItsState(t *testing.T) {
	needEngine(t)
	d, err := loadDecoder(Config{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer d.free()
	pcm := make([]int16, 3200)
	if err := d.startUtterance(); !errors.Is(err, ErrDecode) {
		t.Errorf("second start: %v, want ErrDecode", err)
	}
	if err := d.process(pcm); err != nil {
		t.Fatalf("process in an utterance: %v", err)
	}
	if _, err := d.endUtterance(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.endUtterance(); !errors.Is(err, ErrDecode) {
		t.Errorf("second end: %v, want ErrDecode", err)
	}
	if err := d.process(pcm); !errors.Is(err, ErrDecode) {
		t.Errorf("process outside an utterance: %v, want ErrDecode", err)
	}
}

// TestSessionFailure: a decoder that fails mid-session gives one event
// with Err, then Events closes, later input is refused, and the decoder is
// freed rather than pooled. The failure is real: at its speech start the
// session gets a decoder whose utterance was ended behind its back.
// Mutations caught: the failure not reported (Events just closes), the
// session going on after it, and the failed decoder given back to the pool
// as healthy (idle 1).
func TestSessionFailure(t *testing.T) {
	needEngine(t)
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{PoolSize: 1}.withDefaults()
		p := newPool(cfg.PoolSize, -1, func() (recognizer, error) {
			dec, err := loadDecoder(cfg)
			if err != nil {
				return nil, err
			}
			if _, err := dec.endUtterance(); err != nil {
				dec.free()
				return nil, err
			}
			return dec, nil
		}, nil)
		defer p.close()
		s := startSession(t.Context(), cfg, p, &usage{})
		defer s.Close()
		if err := s.SpeechStarted(); err != nil {
			t.Fatal(err)
		}
		// One frame: the worker fails on the first audio it takes, and
		// from then on SendAudio is refused, so a second frame would race
		// the failure (it did, in CI: "provider session closed").
		if err := s.SendAudio(make([]int16, frame)); err != nil {
			t.Fatalf("first SendAudio: %v", err)
		}
		ev, ok := next(t, s)
		if !ok || !errors.Is(ev.Err, ErrDecode) {
			t.Fatalf("first event %+v (open %v), want ErrDecode", ev, ok)
		}
		if ev, ok := next(t, s); ok {
			t.Fatalf("event %+v after the failure, want Events closed", ev)
		}
		if err := s.SendAudio(make([]int16, frame)); err == nil {
			t.Error("SendAudio after the failure succeeded")
		}
		if loaded, idle := p.stats(); loaded != 0 || idle != 0 {
			t.Errorf("pool after the failure: loaded %d idle %d, want 0 (freed)", loaded, idle)
		}
	})
}
