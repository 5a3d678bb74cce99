package openaispeech

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/tts/openaispeech/speechmock"
)

// TestRequestWire: the endpoint, the headers and the JSON body of a
// request, with a key and without (a local server). Mutations seen
// failing: the Bearer prefix dropped; speed sent when 0 (omitempty
// removed); response_format not sent.
func TestRequestWire(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		auth   string
		want   map[string]any
	}{
		{"openai pcm", func(c *Config) { c.Model, c.Voice, c.Speed, c.Instructions = "gpt-4o-mini-tts", "coral", 1.25, "calm" },
			"Bearer " + testKey,
			map[string]any{"model": "gpt-4o-mini-tts", "voice": "coral", "input": "hello there", "response_format": "pcm", "speed": 1.25, "instructions": "calm"}},
		{"local wav without key", func(c *Config) { c.APIKeyEnv, c.Format = "", FormatWAV },
			"",
			map[string]any{"model": "tts-1", "voice": "alloy", "input": "hello there", "response_format": "wav"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, speechmock.Response{}, c.mutate)
				s := r.connect(t.Context())
				_ = s.Push("c1", "hello there")
				_ = s.Flush("c1")
				sp := untilEnd(t, s, "c1", "hello there")
				if sp.last.Kind != providers.TTSFlushed || !slices.Equal(sp.words, []string{"hello", "there"}) {
					t.Fatalf("%+v", sp)
				}
				reqs := r.srv.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d requests", len(reqs))
				}
				got := reqs[0]
				if got.Auth != c.auth || got.ContentType != "application/json" {
					t.Fatalf("auth %q content type %q", got.Auth, got.ContentType)
				}
				if len(got.Body) != len(c.want) {
					t.Fatalf("body %v, want %v", got.Body, c.want)
				}
				for k, v := range c.want {
					if got.Body[k] != v {
						t.Fatalf("body %v, want %v", got.Body, c.want)
					}
				}
			})
		})
	}
}

// TestStreamsBeforeTheBodyEnds: the first audio is handed out while the
// paced response still has most words to send. Mutation seen failing:
// reads that fill the whole buffer (io.ReadFull) before decoding.
func TestStreamsBeforeTheBodyEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leakCheck(t)
		r := newRig(t, speechmock.Response{Pace: wordPace}, nil)
		s := r.connect(t.Context())
		const text = "one two three four five six seven eight"
		start := time.Now()
		_ = s.Push("c1", text)
		_ = s.Flush("c1")
		ev := next(t, s)
		if ev.Kind != providers.TTSAudio || ev.Rate != 24000 || len(ev.PCM) == 0 {
			t.Fatalf("first event %+v", ev)
		}
		if sent := r.srv.Chunks(); sent > 2 || time.Since(start) != wordPace {
			t.Fatalf("first audio after %d chunks and %v", sent, time.Since(start))
		}
		sp := untilEnd(t, s, "c1", text)
		if sp.last.Kind != providers.TTSFlushed || len(sp.words) != 7 {
			t.Fatalf("%+v", sp)
		}
		if got := time.Since(start); got != 8*wordPace {
			t.Fatalf("Flushed after %v, want %v", got, 8*wordPace)
		}
	})
}

// TestJoinedPieces: pieces pushed while a request is in flight are joined
// into the next request, in order; the context's audio follows the pieces
// in order, and Flushed comes after the last audio. Mutations seen
// failing: a later piece replacing the queued one (c.queued = text); a
// flushed context's queued text dropped (Flushed before its last audio).
func TestJoinedPieces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leakCheck(t)
		r := newRig(t, speechmock.Response{Pace: wordPace}, nil)
		s := r.connect(t.Context())
		_ = s.Push("c1", "one two ")
		synctest.Wait() // the first request is in flight
		_ = s.Push("c1", "three ")
		_ = s.Push("c1", "four")
		_ = s.Flush("c1")
		sp := untilEnd(t, s, "c1", "one two three four")
		if sp.last.Kind != providers.TTSFlushed || !slices.Equal(sp.words, []string{"one", "two", "three", "four"}) {
			t.Fatalf("%+v", sp)
		}
		var inputs []string
		for _, q := range r.srv.Requests() {
			inputs = append(inputs, q.Input)
		}
		if !slices.Equal(inputs, []string{"one two ", "three four"}) {
			t.Fatalf("requests %q", inputs)
		}
	})
}

// TestLongTextIsRequestedInParts: queued text over MaxInputRunes is cut at
// a space. Mutation seen failing: takeInput returning the whole queue.
func TestLongTextIsRequestedInParts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, speechmock.Response{}, func(c *Config) { c.MaxInputRunes = 12 })
		s := r.connect(t.Context())
		_ = s.Push("c1", "alpha beta gamma delta")
		_ = s.Flush("c1")
		sp := untilEnd(t, s, "c1", "alpha beta gamma delta")
		if len(sp.words) != 4 {
			t.Fatalf("%+v", sp)
		}
		var inputs []string
		for _, q := range r.srv.Requests() {
			inputs = append(inputs, q.Input)
		}
		if !slices.Equal(inputs, []string{"alpha beta ", "gamma delta"}) {
			t.Fatalf("requests %q", inputs)
		}
	})
}

// TestConnectionReuse: Warm opens the one connection that the requests of
// two sessions then reuse. Mutation seen failing: DisableKeepAlives in
// the transport.
func TestConnectionReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leakCheck(t)
		r := newRig(t, speechmock.Response{}, nil)
		if err := r.a.Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r.srv.Conns() != 1 || !slices.Equal(r.srv.WarmAuth(), []string{"Bearer " + testKey}) {
			t.Fatalf("%d conns, warm auth %q", r.srv.Conns(), r.srv.WarmAuth())
		}
		for i, text := range []string{"first piece", "second piece"} {
			s := r.connect(t.Context())
			_ = s.Push("c", text)
			_ = s.Flush("c")
			if sp := untilEnd(t, s, "c", text); sp.last.Kind != providers.TTSFlushed {
				t.Fatalf("session %d: %+v", i, sp)
			}
			_ = s.Close()
		}
		if r.srv.Conns() != 1 {
			t.Fatalf("%d connections for warm and two requests", r.srv.Conns())
		}
	})
}

// TestCancel: a cancel in flight (with an audio event of the context
// waiting for the reader), before the headers and before the first byte
// is acknowledged at once (no virtual time passes) and before any further
// audio of the context, the request ends on the server, queued text of
// the context is dropped, and the session serves the next context.
// Mutations seen failing: Cancel not ending the request in flight (the ack
// waits for the body, or the stalled request times out); the waiting
// audio of the cancelled context not dropped (now ttspump's RetractLocked
// of the event held out to the reader; seen failing there after the move).
func TestCancel(t *testing.T) {
	cases := []struct {
		name string
		def  speechmock.Response
		// audioFirst reads the first audio, then lets the next one wait
		// for the reader, before the cancel.
		audioFirst bool
	}{
		{"in flight", speechmock.Response{Pace: wordPace}, true},
		{"before the headers", speechmock.Response{StallHeaders: time.Hour}, false},
		{"before the first byte", speechmock.Response{StallFor: time.Hour}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				leakCheck(t)
				r := newRig(t, c.def, nil)
				s := r.connect(t.Context())
				_ = s.Push("a", "one two three four five six seven eight nine ten")
				if c.audioFirst {
					if ev := next(t, s); ev.Kind != providers.TTSAudio {
						t.Fatalf("%+v", ev)
					}
					time.Sleep(2 * wordPace)
				}
				synctest.Wait()
				_ = s.Push("a", " eleven") // queued behind the request
				at := time.Now()
				if err := s.Cancel("a"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if ack := next(t, s); ack.Kind != providers.TTSCancelled || ack.ContextID != "a" {
					t.Fatalf("after the cancel: %+v", ack)
				}
				if d := time.Since(at); d != 0 {
					t.Fatalf("ack after %v", d)
				}
				synctest.Wait()
				if r.srv.Active() != 0 || len(r.srv.Requests()) != 1 {
					t.Fatalf("%d responses still served, %d requests", r.srv.Active(), len(r.srv.Requests()))
				}
				if err := s.Push("a", "more"); !errors.Is(err, ErrContextClosed) {
					t.Fatalf("push to the cancelled context: %v", err)
				}
				r.srv.SetDefault(speechmock.Response{})
				_ = s.Push("b", "next answer")
				_ = s.Flush("b")
				if sp := untilEnd(t, s, "b", "next answer"); sp.last.Kind != providers.TTSFlushed || len(sp.words) != 2 {
					t.Fatalf("next context: %+v", sp)
				}
			})
		})
	}
}

// TestCancelQueuedContext: a context queued behind another is cancelled
// without a request; the one in flight goes on to its Flushed. Mutation
// seen failing: Cancel ending whatever request is in flight (a's audio
// cut short).
func TestCancelQueuedContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leakCheck(t)
		r := newRig(t, speechmock.Response{Pace: wordPace}, nil)
		s := r.connect(t.Context())
		_ = s.Push("a", "one two three")
		_ = s.Flush("a")
		_ = s.Push("b", "four five")
		if ev := next(t, s); ev.Kind != providers.TTSAudio || ev.ContextID != "a" {
			t.Fatalf("%+v", ev)
		}
		_ = s.Cancel("b")
		var kinds []providers.TTSEventKind
		samples := 0
		for {
			ev := next(t, s)
			if ev.Kind == providers.TTSAudio && ev.ContextID == "a" {
				samples += len(ev.PCM)
				continue
			}
			kinds = append(kinds, ev.Kind)
			if ev.Kind == providers.TTSFlushed {
				break
			}
		}
		// The ack waits for the read in flight (a word's chunk), then
		// comes before a's later audio.
		if !slices.Equal(kinds, []providers.TTSEventKind{providers.TTSCancelled, providers.TTSFlushed}) {
			t.Fatalf("kinds %v", kinds)
		}
		if n := len(r.srv.Requests()); n != 1 || samples != 2*speechmock.DefaultSamplesPerWord {
			t.Fatalf("%d requests, %d samples of a after its first audio", n, samples)
		}
	})
}

// TestBodyShapes: odd-sized chunks (samples split between reads), a WAV
// header split byte by byte, and both together give the words whole.
// Mutations seen failing: the odd byte dropped between reads; a header
// field split between reads refused.
func TestBodyShapes(t *testing.T) {
	cases := []struct {
		name   string
		format string
		resp   speechmock.Response
	}{
		{"pcm odd chunks", FormatPCM, speechmock.Response{OddChunks: true, SamplesPerWord: 50}},
		{"wav", FormatWAV, speechmock.Response{}},
		{"wav header split", FormatWAV, speechmock.Response{SplitHeader: true}},
		{"wav odd chunks", FormatWAV, speechmock.Response{OddChunks: true, SamplesPerWord: 50}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, c.resp, func(cfg *Config) { cfg.Format = c.format })
				s := r.connect(t.Context())
				const text = "red green blue"
				_ = s.Push("c", text)
				_ = s.Flush("c")
				sp := untilEnd(t, s, "c", text)
				per := c.resp.SamplesPerWord
				if per == 0 {
					per = speechmock.DefaultSamplesPerWord
				}
				if sp.last.Kind != providers.TTSFlushed || !slices.Equal(sp.words, strings.Fields(text)) ||
					sp.samples != 3*per || sp.rate != speechmock.Rate {
					t.Fatalf("%+v", sp)
				}
				if c.resp.OddChunks && sp.audio < 10 {
					t.Fatalf("%d audio events for odd chunks", sp.audio)
				}
			})
		})
	}
}

// TestFailures: every failure of a request is one Error event with the
// typed error, then Events closes, and the session refuses more text.
// Refusals carry the status and an excerpt without the key; a stall is a
// Timeout at its deadline, not before, not after. Mutations seen failing:
// the timer not re-armed after the first read (the idle stall waits an
// hour); the excerpt not redacted; a cut (unexpected EOF) read as a clean
// end.
func TestFailures(t *testing.T) {
	echo := `{"error":{"message":"bad key ` + testKey + `"}}`
	cases := []struct {
		name  string
		resp  speechmock.Response
		wav   bool
		check func(error) bool
		after time.Duration // virtual time from the push to the error
		audio bool          // audio before the error
	}{
		{"401", speechmock.Response{Status: 401, ErrorBody: echo}, false, rejected(401), 0, false},
		{"403", speechmock.Response{Status: 403, ErrorBody: echo}, false, rejected(403), 0, false},
		{"429", speechmock.Response{Status: 429, ErrorBody: echo}, false, rejected(429), 0, false},
		{"500", speechmock.Response{Status: 500, ErrorBody: "oops"}, false, rejected(500), 0, false},
		{"503", speechmock.Response{Status: 503}, false, rejected(503), 0, false},
		{"headers stall", speechmock.Response{StallHeaders: time.Hour}, false, timeout("speech response headers"), testTimeout, false},
		{"first byte stall", speechmock.Response{StallFor: time.Hour}, false, timeout("first audio byte"), testTimeout, false},
		// Slow headers (inside their deadline), then no audio: the first
		// audio is owed testTimeout after the text, headers included (the
		// contract suite times it from the text). Mutation seen failing:
		// the first-byte deadline counted from the headers (the error
		// comes at 1.6 testTimeout).
		{"slow headers then first byte stall", speechmock.Response{StallHeaders: testTimeout * 6 / 10, StallFor: time.Hour}, false, timeout("first audio byte"), testTimeout, false},
		{"idle stall", speechmock.Response{StallBefore: 1, StallFor: time.Hour}, false, timeout("gap between audio reads"), testTimeout, true},
		{"cut before audio", speechmock.Response{Cut: true}, false, disconnected, 0, false},
		{"cut mid-body", speechmock.Response{Cut: true, CutAfter: 2}, false, disconnected, 0, true},
		{"not pcm16 mono", speechmock.Response{BadWAV: true}, true, protocol, 0, false},
		{"json instead of audio", speechmock.Response{ContentType: "application/json"}, false, protocol, 0, false},
		// A body ending inside a sample, after two words and after all
		// four (speechmock's Violate, the contract harness's protocol
		// fault): mutation seen failing both, end() ignoring the odd byte.
		{"half sample mid-body", speechmock.Response{Violate: true, ViolateAfter: 2}, false, protocol, 0, true},
		{"half sample at the end", speechmock.Response{Violate: true, ViolateAfter: 4}, false, protocol, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				leakCheck(t)
				r := newRig(t, c.resp, func(cfg *Config) {
					if c.wav {
						cfg.Format = FormatWAV
					}
				})
				s := r.connect(t.Context())
				start := time.Now()
				_ = s.Push("c", "one two three four")
				sawAudio := false
				var ev providers.TTSEvent
				for ev = next(t, s); ev.Kind == providers.TTSAudio; ev = next(t, s) {
					sawAudio = true
				}
				if ev.Kind != providers.TTSError || !c.check(ev.Err) || sawAudio != c.audio {
					t.Fatalf("event %+v (%v), audio %v", ev, ev.Err, sawAudio)
				}
				if strings.Contains(ev.Err.Error(), testKey) {
					t.Fatalf("the key in %v", ev.Err)
				}
				if d := time.Since(start); d != c.after {
					t.Fatalf("error after %v, want %v", d, c.after)
				}
				if _, ok := <-s.Events(); ok {
					t.Fatal("an event after the error")
				}
				if err := s.Push("c", "more"); err == nil {
					t.Fatal("push after the error accepted")
				}
			})
		})
	}
}

func rejected(status int) func(error) bool {
	return func(err error) bool {
		var r *providers.Rejected
		return errors.As(err, &r) && r.Status == status && !strings.Contains(r.Detail, testKey)
	}
}

func timeout(op string) func(error) bool {
	return func(err error) bool {
		var to *providers.Timeout
		return errors.As(err, &to) && to.Op == op
	}
}

func disconnected(err error) bool { return errors.Is(err, providers.ErrDisconnected) }
func protocol(err error) bool     { return errors.Is(err, providers.ErrProtocol) }

// TestSlowButInTime: a service slow within each deadline is waited for;
// the whole utterance arrives. Mutation seen failing: a deadline shorter
// than configured (testTimeout/2 for the first byte).
func TestSlowButInTime(t *testing.T) {
	slow := testTimeout - time.Millisecond
	cases := []struct {
		name string
		resp speechmock.Response
	}{
		{"headers", speechmock.Response{StallHeaders: slow}},
		{"first byte", speechmock.Response{StallFor: slow}},
		{"idle gap", speechmock.Response{StallBefore: 2, StallFor: slow}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, c.resp, nil)
				s := r.connect(t.Context())
				_ = s.Push("c", "one two three")
				_ = s.Flush("c")
				if sp := untilEnd(t, s, "c", "one two three"); sp.last.Kind != providers.TTSFlushed || len(sp.words) != 3 {
					t.Fatalf("%+v", sp)
				}
			})
		})
	}
}

// TestDroppedSessionAndShutdown: the caller's context cancelled, or Close,
// mid-body, while the reader does not read: Events closes without an
// Error, the request ends on the server, no goroutine is left. Mutation
// seen failing: the pump not stopped at the session's end (the
// context.AfterFunc in newSession dropped: the pump blocks on the channel
// nobody reads; Close never returns, the bubble deadlocks).
func TestDroppedSessionAndShutdown(t *testing.T) {
	for _, drop := range []string{"context", "close"} {
		t.Run(drop, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				leakCheck(t)
				r := newRig(t, speechmock.Response{Pace: wordPace}, nil)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				s := r.connect(ctx)
				_ = s.Push("c", "one two three four five six")
				time.Sleep(3 * wordPace) // audio waits for the reader
				if drop == "context" {
					cancel()
				} else {
					_ = s.Close()
					_ = s.Close()
				}
				for ev := range s.Events() {
					if ev.Kind == providers.TTSError {
						t.Fatalf("error on a drop: %v", ev.Err)
					}
				}
				synctest.Wait()
				if r.srv.Active() != 0 {
					t.Fatal("the response is still served")
				}
				if err := s.Push("c", "x"); !errors.Is(err, providers.ErrClosed) {
					t.Fatalf("push after the end: %v", err)
				}
			})
		})
	}
}

// TestBounds: an empty id, too much queued text, too many contexts.
// Mutation seen failing: the queued-text bound not checked.
func TestBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, speechmock.Response{StallHeaders: time.Hour}, func(c *Config) { c.MaxQueuedBytes, c.MaxOpenContexts = 10, 2 })
		s := r.connect(t.Context())
		if err := s.Push("", "x"); !errors.Is(err, ErrEmptyContextID) {
			t.Fatal(err)
		}
		if err := s.Push("a", "0123456789"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // requested: the queue is empty again
		if err := s.Push("a", "0123456789"); err != nil {
			t.Fatal(err)
		}
		if err := s.Push("a", "x"); !errors.Is(err, ErrTextTooLong) {
			t.Fatalf("over the queue bound: %v", err)
		}
		_ = s.Push("b", "x")
		if err := s.Push("c", "x"); !errors.Is(err, ErrTooManyContexts) {
			t.Fatalf("over the context bound: %v", err)
		}
	})
}
