package elevenlabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/providers/tts/elevenlabs/elevenlabsmock"
)

// Catches: a wrong path or voice, a query option dropped or misspelled
// (sync_alignment above all: without it words lag their audio), the key
// in the query instead of the xi-api-key header.
func TestHandshakeQueryAndAuth(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		path   string
		want   url.Values
	}{
		{"defaults", nil, "/v1/text-to-speech/" + DefaultVoiceID + "/multi-stream-input", url.Values{
			"model_id": {"eleven_flash_v2_5"}, "output_format": {"pcm_16000"}, "sync_alignment": {"true"},
			"inactivity_timeout": {"60"},
		}},
		{"every option", func(c *Config) {
			c.VoiceID, c.Model, c.Language, c.SampleRate = "v0ice", ModelTurboV25, "tr", 24000
			c.AutoMode, c.TextNormalization, c.NoLogging, c.InactivityTimeout = true, "off", true, 180*time.Second
		}, "/v1/text-to-speech/v0ice/multi-stream-input", url.Values{
			"model_id": {"eleven_turbo_v2_5"}, "output_format": {"pcm_24000"}, "sync_alignment": {"true"},
			"inactivity_timeout": {"180"}, "language_code": {"tr"}, "auto_mode": {"true"},
			"apply_text_normalization": {"off"}, "enable_logging": {"false"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, tc.mutate)
				s := speechtest.Connect(t, a.Connect)
				_ = s.Close()
				reqs := srv.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d handshakes, want 1", len(reqs))
				}
				r := reqs[0]
				if r.Path != tc.path {
					t.Errorf("path %q, want %q", r.Path, tc.path)
				}
				if got := r.Header.Get("xi-api-key"); got != testKey {
					t.Errorf("xi-api-key %q, want the key", got)
				}
				if r.Header.Get("Authorization") != "" {
					t.Error("an Authorization header was sent too")
				}
				if len(r.Query) != len(tc.want) {
					t.Errorf("query %v, want %v", r.Query, tc.want)
				}
				for k, v := range tc.want {
					if !slices.Equal(r.Query[k], v) {
						t.Errorf("query %s=%v, want %v", k, r.Query[k], v)
					}
				}
				if strings.Contains(r.Query.Encode(), testKey) {
					t.Error("the key is in the query")
				}
			})
		})
	}
}

// Catches: the context not opened with a single space, voice_settings
// sent again with a later context (the service closes the socket with
// 1008), generation_config left out of later contexts, text pieces merged
// or reordered, close_context sent at the Flush (the service's race loses
// the text) instead of with the first audio, close_socket not sent by
// Close, the caller's context id on the wire.
func TestMessagesSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		speed := 1.1
		a, srv := newPipe(t, func(c *Config) {
			c.Voice = &VoiceSettings{Speed: &speed}
			c.ChunkLengthSchedule = []int{50, 120}
		})
		srv.SetStyle(elevenlabsmock.Style{Pace: 100 * time.Millisecond, Latency: 200 * time.Millisecond})
		s := speechtest.Connect(t, a.Connect)
		for _, id := range []string{"answer-1", "answer-2"} {
			if err := s.Push(id, "Hello \"there\", "); err != nil {
				t.Fatal(err)
			}
			if err := s.Push(id, "world."); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(id); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			// The flush is on the wire, the first audio not yet sent:
			// no close_context yet.
			ms := srv.Messages()
			if last := ms[len(ms)-1]; !last.Flush || last.CloseContext {
				t.Fatalf("after Flush the last message is %s, want the flush alone", last.Raw)
			}
			untilFlushed(t, s, id)
		}
		_ = s.Close()
		synctest.Wait() // the mock has read all
		var got []string
		for _, m := range srv.Messages() {
			got = append(got, m.Raw)
		}
		want := []string{
			`{"text":" ","context_id":"c1","voice_settings":{"speed":1.1},"generation_config":{"chunk_length_schedule":[50,120]}}`,
			`{"text":"Hello \"there\", ","context_id":"c1"}`,
			`{"text":"world.","context_id":"c1"}`,
			`{"context_id":"c1","flush":true}`,
			`{"context_id":"c1","close_context":true}`,
			`{"text":" ","context_id":"c2","generation_config":{"chunk_length_schedule":[50,120]}}`,
			`{"text":"Hello \"there\", ","context_id":"c2"}`,
			`{"text":"world.","context_id":"c2"}`,
			`{"context_id":"c2","flush":true}`,
			`{"context_id":"c2","close_context":true}`,
			`{"close_socket":true}`,
		}
		if !slices.Equal(got, want) {
			t.Errorf("messages\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, m := range got {
			if !json.Valid([]byte(m)) {
				t.Errorf("invalid JSON %s", m)
			}
		}
	})
}

// wordOffsets are the offsets the mock's alignment gives the words of
// text: each character, and the space after each word, lasts per.
func wordOffsets(text string, per, lead time.Duration) []time.Duration {
	var out []time.Duration
	at := lead
	for _, w := range strings.Fields(text) {
		out = append(out, at)
		at += time.Duration(len([]rune(w))+1) * per
	}
	return out
}

// Catches: offsets taken from the chunk's own times without the audio
// before it (they restart at each message), words cut between two messages
// split in two or lost, the normalized alignment used (lower-cased words),
// a sample cut between two messages lost or misassembled, big-endian
// samples, leading silence dropped from the offsets, a word emitted after
// Flushed, the words of a message without audio dropped.
func TestWordsAndAudio(t *testing.T) {
	const text = "The quick Brown fox jumps over élan 42 times."
	cases := []struct {
		name  string
		rate  int
		style elevenlabsmock.Style
	}{
		{"word per message", 16000, elevenlabsmock.Style{}},
		{"three words per message", 16000, elevenlabsmock.Style{WordsPerChunk: 3}},
		{"words cut between messages", 16000, elevenlabsmock.Style{WordsPerChunk: 2, SplitWords: true}},
		{"samples cut between messages", 16000, elevenlabsmock.Style{WordsPerChunk: 2, SplitWords: true, OddSplit: true}},
		{"leading silence, 24 kHz", 24000, elevenlabsmock.Style{LeadingSilence: 130 * time.Millisecond, CharDuration: 30 * time.Millisecond}},
		{"8 kHz, paced", 8000, elevenlabsmock.Style{Pace: 50 * time.Millisecond, WordsPerChunk: 2}},
		{"no space after the last word", 16000, elevenlabsmock.Style{WordsPerChunk: 4, NoTrailingSpace: true}},
		// Alignment in a message without audio (as the contract suite's
		// mock sends it): its words must count from the audio delivered
		// so far, not be dropped with the missing audio.
		{"alignment apart from its audio", 16000, elevenlabsmock.Style{SeparateAlignment: true}},
		{"alignment apart, words and samples cut, leading silence", 24000, elevenlabsmock.Style{SeparateAlignment: true,
			WordsPerChunk: 2, SplitWords: true, OddSplit: true, LeadingSilence: 70 * time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, func(c *Config) { c.SampleRate = tc.rate })
				srv.SetStyle(tc.style)
				s := speechtest.Connect(t, a.Connect)
				// Pieces cut inside words: the service joins the text.
				for _, piece := range []string{"The qu", "ick Brown fox ", "jumps over élan 42 times."} {
					if err := s.Push("a", piece); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Flush("a"); err != nil {
					t.Fatal(err)
				}
				sm := summarize(t, untilFlushed(t, s, "a"), tc.rate)
				if want := strings.Fields(text); !slices.Equal(sm.words, want) {
					t.Fatalf("words %q, want %q", sm.words, want)
				}
				per := tc.style.CharDuration
				if per == 0 {
					per = 40 * time.Millisecond
				}
				if want := wordOffsets(text, per, tc.style.LeadingSilence); !slices.Equal(sm.offsets, want) {
					t.Errorf("offsets %v, want %v", sm.offsets, want)
				}
				chars := len([]rune(text)) + 1
				if tc.style.NoTrailingSpace {
					chars--
				}
				total := tc.style.LeadingSilence + time.Duration(chars)*per
				if want := int(int64(total) * int64(tc.rate) / int64(time.Second)); len(sm.pcm) != want {
					t.Errorf("%d samples, want %d", len(sm.pcm), want)
				}
				wantRamp(t, sm.pcm)
				if last := sm.offsets[len(sm.offsets)-1]; time.Duration(len(sm.pcm))*time.Second/time.Duration(tc.rate) <= last {
					t.Error("the audio ends before the last word starts")
				}
			})
		})
	}
}

// Catches: close_context sent with the flush (the service's race: the
// text is lost, isFinal comes without audio).
func TestCloseWaitsForTheFirstAudio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetStyle(elevenlabsmock.Style{LoseEarlyClose: true})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "still spoken")
		_ = s.Flush("a")
		sm := summarize(t, untilFlushed(t, s, "a"), DefaultSampleRate)
		if !slices.Equal(sm.words, []string{"still", "spoken"}) || len(sm.pcm) == 0 {
			t.Errorf("words %q, %d samples: the text was lost", sm.words, len(sm.pcm))
		}
		// Text without letters may make no audio: it is closed with its
		// flush, so it ends even if none comes.
		_ = s.Push("b", " ... ")
		_ = s.Flush("b")
		synctest.Wait()
		ms := srv.Messages()
		if last := ms[len(ms)-1]; !last.CloseContext || last.ContextID != "c2" {
			t.Errorf("last message %s, want the close of c2 with its flush", last.Raw)
		}
		untilFlushed(t, s, "b")
	})
}

// Catches: a Cancel acknowledged late (behind the queued audio) or not at
// all, audio of the cancelled context after the ack (the service goes on
// with a flushed context after close_context), close_context not sent, a
// session that cannot serve the next context (same id or another), a
// cancelled context's slot freed before the service finished it.
func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, func(c *Config) { c.EventBuffer = 4 })
		srv.SetStyle(elevenlabsmock.Style{Pace: 40 * time.Millisecond})
		s := speechtest.Connect(t, a.Connect)
		long := strings.Repeat("many words to say ", 20)
		_ = s.Push("a", long)
		_ = s.Flush("a")
		for {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Kind == providers.TTSAudio {
				break
			}
		}
		time.Sleep(300 * time.Millisecond) // the queue fills: the caller is slow
		start := time.Now()
		if err := s.Cancel("a"); err != nil {
			t.Fatal(err)
		}
		after := 0
		for {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Kind == providers.TTSCancelled {
				if ev.ContextID != "a" {
					t.Fatalf("ack for %q", ev.ContextID)
				}
				break
			}
			after++
		}
		if took := time.Since(start); took > 0 || after > 1 {
			t.Errorf("ack after %v and %d events, want at once and at most 1 (the one being handed over)", took, after)
		}
		// The same id is a new generation; the old one's audio still
		// arriving must not leak into it.
		_ = s.Push("a", "fresh start")
		_ = s.Flush("a")
		sm := summarize(t, untilFlushed(t, s, "a"), DefaultSampleRate)
		if !slices.Equal(sm.words, []string{"fresh", "start"}) {
			t.Errorf("next context words %q", sm.words)
		}
		wantRamp(t, sm.pcm)
		closes := 0
		for _, m := range srv.Messages() {
			if m.CloseContext && m.ContextID == "c1" {
				closes++
			}
		}
		if closes != 1 {
			t.Errorf("%d close_context for the cancelled context, want 1", closes)
		}
		// Nothing else comes.
		select {
		case ev := <-s.Events():
			t.Errorf("stray event %+v", ev.Kind)
		case <-time.After(2 * time.Second):
		}
	})
}

// Catches: a Cancel of a context never opened left without its ack, the
// cancelled context's queued events not dropped, the ack queued behind
// the events of another context (it must come first).
func TestCancelUnknownAndQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetStyle(elevenlabsmock.Style{}) // a burst: all queued at once
		s := speechtest.Connect(t, a.Connect)
		if err := s.Cancel("never"); err != nil {
			t.Fatal(err)
		}
		if ev, _ := speechtest.Next(t, s, time.Second); ev.Kind != providers.TTSCancelled || ev.ContextID != "never" {
			t.Fatalf("got %v for %q", ev.Kind, ev.ContextID)
		}
		_ = s.Push("x", "one two three four five six")
		_ = s.Push("b", "one two three four five six")
		_ = s.Flush("x")
		_ = s.Flush("b")
		synctest.Wait() // every event of x and b is queued
		_ = s.Cancel("b")
		n := 0
		for {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Kind == providers.TTSCancelled {
				break
			}
			n++
		}
		if n > 1 {
			t.Errorf("%d queued events came before the ack, want it ahead of the queue", n)
		}
		// x is whole and b is gone.
		sm := summarize(t, untilFlushed(t, s, "x"), DefaultSampleRate)
		if len(sm.words)+n < 6 {
			t.Errorf("x lost words: %q", sm.words)
		}
	})
}

// Catches: the events of two contexts crossed (words or audio of one in
// the other), offsets shared between contexts.
func TestTwoContexts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.Script(elevenlabsmock.Style{Pace: 30 * time.Millisecond}, elevenlabsmock.Style{Pace: 50 * time.Millisecond, WordsPerChunk: 2})
		s := speechtest.Connect(t, a.Connect)
		texts := map[string]string{"x": "alpha beta gamma delta", "y": "one two three four five"}
		_ = s.Push("x", texts["x"])
		_ = s.Push("y", texts["y"])
		_ = s.Flush("x")
		_ = s.Flush("y")
		evs := map[string][]providers.TTSEvent{}
		done := 0
		for done < 2 {
			ev, ok := speechtest.Next(t, s, time.Minute)
			if !ok || ev.Kind == providers.TTSError {
				t.Fatalf("session ended: %v", ev.Err)
			}
			evs[ev.ContextID] = append(evs[ev.ContextID], ev)
			if ev.Kind == providers.TTSFlushed {
				done++
			}
		}
		for id, text := range texts {
			sm := summarize(t, evs[id], DefaultSampleRate)
			if !slices.Equal(sm.words, strings.Fields(text)) {
				t.Errorf("%s: words %q", id, sm.words)
			}
			if want := wordOffsets(text, 40*time.Millisecond, 0); !slices.Equal(sm.offsets, want) {
				t.Errorf("%s: offsets %v, want %v", id, sm.offsets, want)
			}
			wantRamp(t, sm.pcm)
		}
	})
}

// Catches: contexts over the service's limit sent (it closes the socket),
// a cancelled context's slot freed before its isFinal, a Push to a
// flushed context accepted, a Flush of an unknown context left without
// Flushed.
func TestContextRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetStyle(elevenlabsmock.Style{Pace: time.Second})
		s := speechtest.Connect(t, a.Connect)
		for i := range 5 {
			if err := s.Push(fmt.Sprint(i), "some words here"); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Push("5", "one too many"); !errors.Is(err, ErrTooManyContexts) {
			t.Fatalf("sixth context: %v", err)
		}
		_ = s.Flush("0")
		if err := s.Push("0", "more"); !errors.Is(err, ErrContextFlushed) {
			t.Errorf("Push after Flush: %v", err)
		}
		if err := s.Flush("0"); !errors.Is(err, ErrContextFlushed) {
			t.Errorf("second Flush: %v", err)
		}
		// Cancel "0" while the service still speaks it: its slot stays
		// taken until its isFinal.
		for {
			if ev, _ := speechtest.Next(t, s, time.Minute); ev.Kind == providers.TTSAudio {
				break
			}
		}
		_ = s.Cancel("0")
		if err := s.Push("5", "still too many"); !errors.Is(err, ErrTooManyContexts) {
			t.Errorf("Push while the cancelled context drains: %v", err)
		}
		time.Sleep(10 * time.Second) // its last audio and isFinal
		if err := s.Push("5", "now it fits"); err != nil {
			t.Errorf("Push after the drain: %v", err)
		}
		if err := s.Flush("never-pushed"); err != nil {
			t.Fatal(err)
		}
		for {
			ev, _ := speechtest.Next(t, s, time.Minute)
			if ev.Kind == providers.TTSFlushed && ev.ContextID == "never-pushed" {
				break
			}
		}
		for _, bad := range []error{s.Push("", "x"), s.Flush(""), s.Cancel("")} {
			if !errors.Is(bad, ErrEmptyContextID) {
				t.Errorf("empty id: %v", bad)
			}
		}
	})
}

// Catches: each failure mapped to the wrong typed error, a failure that
// ends the session without its error event, events after it, the key or
// the spoken text in the error.
func TestServerFaultsMapToTypedErrors(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		fault  wsmock.Fault
		check  func(t *testing.T, err error)
	}{
		{"malformed JSON", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol}, Violation: wsmock.ViolateMalformed},
			func(t *testing.T, err error) { speechtest.AsType[*providers.Protocol](t, err) }},
		{"binary from the server", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol, BeforeEvent: 1}, Violation: wsmock.ViolateBinary},
			func(t *testing.T, err error) { speechtest.AsType[*providers.Protocol](t, err) }},
		{"oversized message", func(c *Config) { c.MaxMessageBytes = 4096 }, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol}, Violation: wsmock.ViolateOversized},
			func(t *testing.T, err error) {
				if p := speechtest.AsType[*providers.Protocol](t, err); !strings.Contains(p.Detail, "4096") {
					t.Errorf("detail %q does not name the limit", p.Detail)
				}
			}},
		{"connection cut", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect}},
			func(t *testing.T, err error) { speechtest.AsType[*providers.Disconnected](t, err) }},
		{"cut in the middle of a context", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 2}},
			func(t *testing.T, err error) { speechtest.AsType[*providers.Disconnected](t, err) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, tc.mutate)
				srv.Inject(tc.fault)
				s := speechtest.Connect(t, a.Connect)
				_ = s.Push("a", "secret words spoken here")
				_ = s.Flush("a")
				err := speechtest.TTSFailure(t, s)
				tc.check(t, err)
				if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q holds the key or the text", err)
				}
				if err := s.Push("a", "x"); !errors.Is(err, providers.ErrClosed) {
					t.Errorf("Push after the failure: %v, want ErrClosed", err)
				}
			})
		})
	}
}

// Catches: a service close mapped to the wrong kind: a bad key or a quota
// is a refusal (401 not retryable, 429 retryable), a refused message a
// Protocol error, a server error a drop.
func TestServiceCloseMapping(t *testing.T) {
	cases := []struct {
		code   int
		reason string
		check  func(error) bool
	}{
		{1008, "Invalid API key", func(e error) bool { r, ok := errors.AsType[*providers.Rejected](e); return ok && r.Status == 401 }},
		{1008, "This request exceeds your quota. You have 3 credits remaining", func(e error) bool {
			r, ok := errors.AsType[*providers.Rejected](e)
			return ok && r.Status == 429
		}},
		{1008, "Maximum simultaneous contexts per WebSocket connection exceeded (5).", func(e error) bool {
			r, ok := errors.AsType[*providers.Rejected](e)
			return ok && r.Status == 429
		}},
		{1008, "voice_settings field must be provided in the first message", func(e error) bool { return errors.Is(e, providers.ErrProtocol) }},
		{1011, "internal error", func(e error) bool { return errors.Is(e, providers.ErrDisconnected) }},
		{1000, "", func(e error) bool { return errors.Is(e, providers.ErrDisconnected) }},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.code, " ", tc.reason), func(t *testing.T) {
			if got := mapClose(tc.code, tc.reason); !tc.check(got) {
				t.Errorf("got %v", got)
			}
		})
	}
}

// Catches: a refused handshake that loses its status or is not a
// Rejected, the service's status code not kept as the detail.
func TestRefusedHandshake(t *testing.T) {
	for _, status := range []int{401, 429, 500, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				speechtest.CheckRefused(t, srv.Inject, a.Connect, status,
					`{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}`, "invalid_api_key")
			})
		})
	}
}

// Catches: a connect without a deadline, or with a hard-coded one.
func TestConnectDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		speechtest.CheckConnectDeadline(t, srv.Inject, a.Connect, testConnect)
	})
}

// Catches: no deadline on the first audio after a flush, a deadline armed
// for the first audio only (the gap after it), a deadline started at the
// wrong point (the connect, the push), a slow audio inside the deadline
// cut off.
func TestReplyDeadlines(t *testing.T) {
	cases := []struct {
		name   string
		fault  wsmock.Fault
		failAt time.Duration // after the flush or the first event read; 0: no failure
	}{
		{"first audio stalled", wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 0}}, testReply},
		{"gap after the first audio", wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1}}, testReply},
		// The first audio a second after the flush: a deadline left where
		// the flush armed it fires a second early.
		{"slow first audio", wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDelay, BeforeEvent: 0, Duration: testReply / 2}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				srv.Inject(tc.fault)
				srv.SetStyle(elevenlabsmock.Style{Latency: time.Second})
				s := speechtest.Connect(t, a.Connect)
				_ = s.Push("a", "one two three")
				time.Sleep(time.Minute) // unflushed text owes nothing
				start := time.Now()
				_ = s.Flush("a")
				if tc.failAt == 0 {
					sm := summarize(t, untilFlushed(t, s, "a"), DefaultSampleRate)
					if len(sm.words) != 3 {
						t.Errorf("words %q", sm.words)
					}
					return
				}
				if tc.fault.BeforeEvent == 1 {
					for {
						// A closed Events or a failure ends the wait: reading
						// on would spin on the closed channel forever (the
						// bubble's clock never moves), as it did with a
						// deadline armed at Push.
						ev, ok := speechtest.Next(t, s, 2*time.Second)
						if !ok || ev.Kind == providers.TTSError {
							t.Fatalf("the session ended before the first audio (%v)", ev.Err)
						}
						if ev.Kind == providers.TTSAudio {
							break
						}
					}
					start = time.Now()
				}
				err := speechtest.TTSFailure(t, s)
				if tm := speechtest.AsType[*providers.Timeout](t, err); tm.Op != "audio" {
					t.Errorf("op %q", tm.Op)
				}
				if took := time.Since(start); took != tc.failAt {
					t.Errorf("timed out %v after the stall began, want %v", took, tc.failAt)
				}
			})
		})
	}
}

// Catches: a caller slower than the service counted against the service
// (a reply deadline left armed while the reader waits for room), events
// lost or reordered when the queue is full.
func TestSlowCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := newPipe(t, func(c *Config) { c.EventBuffer = 4 })
		s := speechtest.Connect(t, a.Connect)
		text := strings.Repeat("word ", 40)
		_ = s.Push("a", text)
		_ = s.Flush("a")
		time.Sleep(3 * testReply) // nobody reads
		sm := summarize(t, untilFlushed(t, s, "a"), DefaultSampleRate)
		if len(sm.words) != 40 {
			t.Errorf("%d words, want 40", len(sm.words))
		}
		wantRamp(t, sm.pcm)
	})
}

// Catches: a Close that hangs on a silent server beyond CloseTimeout, an
// error event for a session the caller closed, calls after Close not
// refused.
func TestCloseInTheMiddle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1}})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "one two three")
		_ = s.Flush("a")
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > testClose {
			t.Errorf("Close took %v, over %v", took, testClose)
		}
		for ev := range s.Events() {
			t.Fatalf("event after Close: %v", ev.Kind)
		}
		if err := s.Push("a", "x"); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("Push after Close: %v", err)
		}
		if err := s.Cancel("a"); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("Cancel after Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// Catches: a session that outlives its context, or reports its
// cancellation as a failure.
func TestContextEndsTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetStyle(elevenlabsmock.Style{Pace: 100 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		s, err := a.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_ = s.Push("a", "one two three four")
		_ = s.Flush("a")
		_, _ = speechtest.Next(t, s, time.Second)
		cancel()
		for ev := range s.Events() {
			if ev.Kind == providers.TTSError {
				t.Fatalf("error event after cancel: %v", ev.Err)
			}
		}
	})
}

// Catches: a quiet socket left without keep-alives (the service closes
// it), keep-alives while text flows.
func TestKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		time.Sleep(35 * time.Second)
		_ = s.Close()
		n := 0
		for _, m := range srv.Messages() {
			if m.Raw == `{"text":""}` {
				n++
			}
		}
		if n != 3 {
			t.Errorf("%d keep-alives in 35 s of quiet, want 3 (every 10 s)", n)
		}
	})
}

// Catches: Warm that leaves nothing for Connect (the connect dials anew).
func TestWarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dials speechtest.Dials
		a, srv := newPipe(t, func(c *Config) { c.DialContext = dials.Wrap(c.DialContext) })
		speechtest.CheckWarm(t, a.Warm, a.Connect, dials.Count, srv.Handshakes)
	})
}

// Catches: a missing key accepted, a key value in the error.
func TestNewNeedsTheKey(t *testing.T) {
	t.Setenv(testKeyEnv, "")
	_, err := New(Config{APIKeyEnv: testKeyEnv})
	if !errors.Is(err, ErrMissingKey) || !strings.Contains(err.Error(), testKeyEnv) {
		t.Errorf("got %v", err)
	}
}

// Catches: configs Validate lets through.
func TestValidate(t *testing.T) {
	slow, fast := 0.5, 1.0
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"full", Config{URL: "wss://api.eu.residency.elevenlabs.io", SampleRate: 24000, Voice: &VoiceSettings{Speed: &fast},
			ChunkLengthSchedule: []int{50, 500}, TextNormalization: "on", InactivityTimeout: 180 * time.Second}, true},
		{"http URL", Config{URL: "https://api.elevenlabs.io"}, false},
		{"URL with path", Config{URL: "wss://api.elevenlabs.io/v1"}, false},
		{"rate", Config{SampleRate: 48000}, false},
		{"v3 model", Config{Model: "eleven_v3"}, false},
		{"voice id with slash", Config{VoiceID: "a/b"}, false},
		{"schedule entry", Config{ChunkLengthSchedule: []int{20}}, false},
		{"normalization", Config{TextNormalization: "yes"}, false},
		{"inactivity over 180 s", Config{InactivityTimeout: 181 * time.Second}, false},
		{"inactivity fraction", Config{InactivityTimeout: 1500 * time.Millisecond}, false},
		{"speed", Config{Voice: &VoiceSettings{Speed: &slow}}, false},
		{"negative", Config{ReplyTimeout: -1}, false},
		{"tiny message limit", Config{MaxMessageBytes: 100}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
