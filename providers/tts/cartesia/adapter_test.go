package cartesia

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/providers/tts/cartesia/cartesiamock"
)

// Catches: a wrong path, the key in the query or under another header,
// the version header missing.
func TestHandshakeHeadersAndPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, func(c *Config) { c.Version = "2024-11-13" })
		s := speechtest.Connect(t, a.Connect)
		_ = s.Close()
		reqs := srv.Server.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d handshakes, want 1", len(reqs))
		}
		r := reqs[0]
		if r.Path != "/tts/websocket" {
			t.Errorf("path %q", r.Path)
		}
		if got := r.Header.Get("X-API-Key"); got != testKey {
			t.Errorf("X-API-Key %q, want the key", got)
		}
		if got := r.Header.Get("Cartesia-Version"); got != "2024-11-13" {
			t.Errorf("Cartesia-Version %q", got)
		}
		if len(r.Query) != 0 {
			t.Errorf("query %v, want none (the key never goes in the URL)", r.Query)
		}
	})
}

// fieldsJSON is a request's repeated members as canonical JSON.
func fieldsJSON(t *testing.T, f map[string]any) string {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Catches: a generation request missing a member the service requires, an
// option not sent or sent under the wrong name, continue wrong on a push
// or on the flush, a transcript changed (trimmed, joined), the flush
// carrying text, members that change within a context (the service
// refuses that), one context_id for two contexts.
func TestRequestShapes(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"defaults", nil, `{"add_timestamps":true,"language":"en","model_id":"sonic-3",` +
			`"output_format":{"container":"raw","encoding":"pcm_s16le","sample_rate":16000},` +
			`"voice":{"id":"a0e99841-438c-4a64-b679-ae501e7d6091","mode":"id"}}`},
		{"every option", func(c *Config) {
			c.Model, c.Voice, c.Language, c.SampleRate = "sonic-2", "v-1", "de", 24000
			c.Speed, c.Volume, c.Emotion, c.MaxBufferDelay = 1.2, 0.8, "calm", 500*time.Millisecond
		}, `{"add_timestamps":true,"generation_config":{"emotion":"calm","speed":1.2,"volume":0.8},"language":"de",` +
			`"max_buffer_delay_ms":500,"model_id":"sonic-2",` +
			`"output_format":{"container":"raw","encoding":"pcm_s16le","sample_rate":24000},"voice":{"id":"v-1","mode":"id"}}`},
		{"no buffer delay", func(c *Config) { c.NoBufferDelay, c.SampleRate = true, 8000 }, `{"add_timestamps":true,"language":"en",` +
			`"max_buffer_delay_ms":0,"model_id":"sonic-3","output_format":{"container":"raw","encoding":"pcm_s16le","sample_rate":8000},` +
			`"voice":{"id":"a0e99841-438c-4a64-b679-ae501e7d6091","mode":"id"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, tc.mutate)
				s := speechtest.Connect(t, a.Connect)
				for _, p := range []string{"Hello, ", "wide \"world\" "} {
					if err := s.Push("turn-1", p); err != nil {
						t.Fatal(err)
					}
				}
				_ = s.Push("turn-2", "Other.")
				_ = s.Flush("turn-1")
				_ = s.Flush("turn-2")
				until(t, s, providers.TTSFlushed, "turn-1")
				until(t, s, providers.TTSFlushed, "turn-2") // the mock queues done in flush order
				reqs := srv.Requests()
				if len(reqs) != 5 {
					t.Fatalf("%d requests, want 5: %+v", len(reqs), reqs)
				}
				type shape struct {
					ctx, text string
					cont      bool
				}
				var got []shape
				for _, r := range reqs {
					got = append(got, shape{r.ContextID, r.Transcript, r.Continue})
					if f := fieldsJSON(t, r.Fields); f != tc.want {
						t.Errorf("request members\n%s\nwant\n%s", f, tc.want)
					}
					if r.Cancel || r.Flush {
						t.Errorf("request %+v has cancel or flush", r)
					}
				}
				want := []shape{{"ctx-1", "Hello, ", true}, {"ctx-1", "wide \"world\" ", true}, {"ctx-2", "Other.", true}, {"ctx-1", "", false}, {"ctx-2", "", false}}
				if !slices.Equal(got, want) {
					t.Errorf("requests\n%+v\nwant\n%+v", got, want)
				}
			})
		})
	}
}

// Catches: audio decoded big-endian or at the wrong rate, words out of
// order, offsets not the service's starts, events after Flushed, audio
// cut before the last word starts, an event of another context.
func TestAudioAndWords(t *testing.T) {
	for _, rate := range []int{8000, 16000, 24000} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, func(c *Config) { c.SampleRate = rate })
				srv.SetVoice(cartesiamock.Voice{ChunksPerWord: 3, LeadingSilence: 80 * time.Millisecond})
				s := speechtest.Connect(t, a.Connect)
				_ = s.Push("a", "Hello big world.")
				_ = s.Flush("a")
				evs := until(t, s, providers.TTSFlushed, "a")
				sum := summarize(evs)
				if !slices.Equal(sum.words, []string{"Hello", "big", "world."}) {
					t.Errorf("words %q", sum.words)
				}
				wantOff := []time.Duration{80 * time.Millisecond, 280 * time.Millisecond, 480 * time.Millisecond}
				if !slices.Equal(sum.offsets, wantOff) {
					t.Errorf("offsets %v, want %v", sum.offsets, wantOff)
				}
				if want := rate * 680 / 1000; sum.samples != want {
					t.Errorf("%d samples, want %d (680 ms at %d Hz)", sum.samples, want, rate)
				}
				if len(sum.rates) != 1 || !sum.rates[rate] {
					t.Errorf("rates %v", sum.rates)
				}
				for _, ev := range evs {
					if ev.ContextID != "a" {
						t.Fatalf("event of context %q", ev.ContextID)
					}
				}
				// The first word's audio follows its timestamps: the
				// mock's ramp, starting at -1000, little-endian.
				for i, ev := range evs {
					if ev.Kind == providers.TTSWord && ev.Word == "Hello" {
						pcm := evs[i+1].PCM
						if evs[i+1].Kind != providers.TTSAudio || pcm[0] != -1000 || pcm[1] != -999 {
							t.Errorf("first word audio starts %v", pcm[:2])
						}
					}
				}
				select {
				case ev := <-s.Events():
					t.Errorf("event after Flushed: %+v", ev)
				case <-time.After(time.Second):
				}
			})
		})
	}
}

// Catches: text pieces sent as separate generations (a word split across
// pushes spoken as two), offsets restarting at each piece.
func TestWordsContinueAcrossPushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		for _, p := range []string{"Hel", "lo wor", "ld, and ", "again."} {
			if err := s.Push("a", p); err != nil {
				t.Fatal(err)
			}
		}
		_ = s.Flush("a")
		sum := summarize(until(t, s, providers.TTSFlushed, "a"))
		if !slices.Equal(sum.words, []string{"Hello", "world,", "and", "again."}) {
			t.Errorf("words %q", sum.words)
		}
		for i := 1; i < len(sum.offsets); i++ {
			if sum.offsets[i] <= sum.offsets[i-1] {
				t.Errorf("offsets not strictly increasing: %v", sum.offsets)
			}
		}
		if sum.flushed != 1 {
			t.Errorf("%d Flushed", sum.flushed)
		}
	})
}

// Catches: an odd byte of a chunk lost or misplaced (the next sample
// shifted by a byte).
func TestOddSizedChunksCarryTheByte(t *testing.T) {
	var c tctx
	var got []int16
	for _, b := range [][]byte{{0x01}, {0x02, 0x03}, {0x04, 0x05, 0x06}, {}, {0x07}} {
		got = append(got, c.samples(b)...)
	}
	want := []int16{0x0201, 0x0403, 0x0605}
	if !slices.Equal(got, want) || !c.hasOdd || c.odd != 0x07 {
		t.Errorf("samples %#x, carry %v %#x; want %#x and 0x07 carried", got, c.hasOdd, c.odd, want)
	}
}

// Catches: a Cancel that waits for the service (which sends no ack), an
// ack late or missing, audio of the cancelled context after the ack (the
// reader not dropping its later messages), a session that cannot serve
// the next context, the cancel message not sent or for another
// context_id.
func TestCancelAckAndNextContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		// Paced like a real-time synthesizer: 40 ms per message.
		srv.SetVoice(cartesiamock.Voice{ChunksPerWord: 5, Pace: 40 * time.Millisecond})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", strings.Repeat("word ", 20))
		_ = s.Flush("a")
		for {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Kind == providers.TTSAudio {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		for len(s.Events()) > 0 {
			<-s.Events() // handed over already: not the provider's to take back
		}
		start := time.Now()
		if err := s.Cancel("a"); err != nil {
			t.Fatal(err)
		}
		after := 0
		for {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Kind == providers.TTSCancelled && ev.ContextID == "a" {
				break
			}
			after++
		}
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("ack after %v", took)
		}
		if after > 2 {
			t.Errorf("%d events between the cancel and its ack, at most 2", after)
		}
		select {
		case ev := <-s.Events():
			t.Errorf("event after the ack: %+v", ev)
		case <-time.After(time.Second):
		}
		var cancels []string
		for _, r := range srv.Requests() {
			if r.Cancel {
				cancels = append(cancels, r.ContextID)
			}
		}
		if !slices.Equal(cancels, []string{"ctx-1"}) {
			t.Errorf("cancel messages for %v, want [ctx-1]", cancels)
		}
		// The next context is served in full.
		_ = s.Push("b", "Next answer.")
		_ = s.Flush("b")
		sum := summarize(until(t, s, providers.TTSFlushed, "b"))
		if !slices.Equal(sum.words, []string{"Next", "answer."}) {
			t.Errorf("next context words %q", sum.words)
		}
	})
}

// Catches: events not yet handed over not taken back at the Cancel (the
// service had sent the whole context already).
func TestCancelTakesBackWhatIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, func(c *Config) { c.EventBuffer = 2 })
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", strings.Repeat("word ", 30))
		_ = s.Flush("a")
		synctest.Wait() // every message of the context has been read
		if n := srv.Sent(); n != 61 {
			t.Fatalf("mock sent %d messages, want 61 (30 words, their audio, done)", n)
		}
		_ = s.Cancel("a")
		var before int
		for {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Kind == providers.TTSCancelled {
				break
			}
			before++
		}
		// Two in the channel, one in the pump's hand.
		if before > 3 {
			t.Errorf("%d events reached Events after the Cancel, want at most 3 (the rest taken back)", before)
		}
		if st, _ := StatsOf(s); st.Retracted < 58 {
			t.Errorf("stats %+v: want at least 58 taken back", st)
		}
		select {
		case ev := <-s.Events():
			t.Errorf("event after the ack: %+v", ev)
		case <-time.After(time.Second):
		}
	})
}

// Catches: a service that goes on sending the cancelled context (the real
// one may, for a generation it has begun) getting its audio through after
// the ack: the reader must drop the context's later messages.
func TestCancelDropsWhatTheServiceStillSends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetVoice(cartesiamock.Voice{Pace: 40 * time.Millisecond, IgnoreCancel: true})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", strings.Repeat("word ", 10))
		_ = s.Flush("a")
		until(t, s, providers.TTSAudio, "a")
		_ = s.Cancel("a")
		until(t, s, providers.TTSCancelled, "a")
		select {
		case ev := <-s.Events():
			t.Errorf("event after the ack: %+v", ev)
		case <-time.After(2 * time.Second):
		}
		if st, _ := StatsOf(s); st.Dropped < 15 {
			t.Errorf("stats %+v: the mock's later messages were not dropped", st)
		}
		// The done of the cancelled context owed nothing: no timeout.
		time.Sleep(2 * testReply)
		select {
		case ev := <-s.Events():
			t.Errorf("event after the quiet: %+v", ev)
		default:
		}
	})
}

// Catches: the debt of a text sent to a context that is then cancelled
// surviving the cancel: the service sends nothing for it, and the session
// would time out.
func TestCancelBeforeAnyAnswerOwesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetVoice(cartesiamock.Voice{Pace: time.Hour})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "Never spoken.")
		_ = s.Cancel("a")
		until(t, s, providers.TTSCancelled, "a")
		time.Sleep(2 * testReply)
		select {
		case ev := <-s.Events():
			t.Fatalf("event after the cancel: %+v", ev)
		default:
		}
		srv.SetVoice(cartesiamock.Voice{})
		_ = s.Push("b", "Spoken.")
		_ = s.Flush("b")
		until(t, s, providers.TTSFlushed, "b")
	})
}

// Catches: Flush or Cancel of a context never opened waiting for the
// service, a Push into a context being flushed reaching the service (it
// refuses input after continue=false), an id not usable again after its
// Flushed.
func TestContextLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		_ = s.Flush("never")
		if ev, _ := speechtest.Next(t, s, time.Millisecond); ev.Kind != providers.TTSFlushed || ev.ContextID != "never" {
			t.Errorf("Flush of a new context: %+v", ev)
		}
		_ = s.Cancel("never-either")
		if ev, _ := speechtest.Next(t, s, time.Millisecond); ev.Kind != providers.TTSCancelled || ev.ContextID != "never-either" {
			t.Errorf("Cancel of a new context: %+v", ev)
		}
		_ = s.Push("a", "One.")
		_ = s.Flush("a")
		if err := s.Push("a", "Two."); !errors.Is(err, ErrContextClosed) {
			t.Errorf("Push while flushing: %v", err)
		}
		if err := s.Flush("a"); err != nil {
			t.Errorf("second Flush: %v", err)
		}
		until(t, s, providers.TTSFlushed, "a")
		_ = s.Push("a", "Three.")
		_ = s.Flush("a")
		sum := summarize(until(t, s, providers.TTSFlushed, "a"))
		if !slices.Equal(sum.words, []string{"Three."}) || sum.offsets[0] != 0 {
			t.Errorf("reused id: words %q offsets %v", sum.words, sum.offsets)
		}
		for _, r := range srv.Requests() {
			if r.Transcript == "Two." {
				t.Error("the push into the flushing context was sent")
			}
		}
		if got := srv.Requests()[len(srv.Requests())-1].ContextID; got != "ctx-2" {
			t.Errorf("the reused id went out as %q, want a new context_id", got)
		}
	})
}

// Catches: events of two interleaved contexts mixed up (a word or audio
// under the other context id), one Flushed for both.
func TestTwoContexts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "alpha beta ")
		_ = s.Push("b", "one two three ")
		_ = s.Push("a", "gamma")
		_ = s.Flush("b")
		_ = s.Flush("a")
		var evs []providers.TTSEvent
		flushed := map[string]bool{}
		for len(flushed) < 2 {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			evs = append(evs, ev)
			if ev.Kind == providers.TTSFlushed {
				flushed[ev.ContextID] = true
			}
		}
		per := map[string][]providers.TTSEvent{}
		for _, ev := range evs {
			per[ev.ContextID] = append(per[ev.ContextID], ev)
		}
		if w := summarize(per["a"]).words; !slices.Equal(w, []string{"alpha", "beta", "gamma"}) {
			t.Errorf("a: %q", w)
		}
		if w := summarize(per["b"]).words; !slices.Equal(w, []string{"one", "two", "three"}) {
			t.Errorf("b: %q", w)
		}
		if sa, sb := summarize(per["a"]).samples, summarize(per["b"]).samples; sa != 9600 || sb != 9600 {
			t.Errorf("samples a %d b %d, want 9600 each", sa, sb)
		}
	})
}

// Catches: each failure mapped to the wrong typed error, a failure that
// ends the session without its Err event, events after the Err, the
// key or the text in an error.
func TestServerFaultsMapToTypedErrors(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		fault  wsmock.Fault
		fail   int // FailNext status, 0: none
		check  func(t *testing.T, err error)
	}{
		{"malformed JSON", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol}, Violation: wsmock.ViolateMalformed}, 0,
			func(t *testing.T, err error) { speechtest.AsType[*providers.Protocol](t, err) }},
		{"binary from the server", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol}, Violation: wsmock.ViolateBinary}, 0,
			func(t *testing.T, err error) { speechtest.AsType[*providers.Protocol](t, err) }},
		{"oversized message", func(c *Config) { c.MaxMessageBytes = 4096 }, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol}, Violation: wsmock.ViolateOversized}, 0,
			func(t *testing.T, err error) {
				if p := speechtest.AsType[*providers.Protocol](t, err); !strings.Contains(p.Detail, "4096") {
					t.Errorf("detail %q does not name the limit", p.Detail)
				}
			}},
		{"cut before the first message", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect}}, 0,
			func(t *testing.T, err error) { speechtest.AsType[*providers.Disconnected](t, err) }},
		{"cut after three messages", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 3}}, 0,
			func(t *testing.T, err error) { speechtest.AsType[*providers.Disconnected](t, err) }},
		{"error message 429", nil, wsmock.Fault{}, 429,
			func(t *testing.T, err error) {
				r := speechtest.AsType[*providers.Rejected](t, err)
				if r.Status != 429 || r.Detail != "mock_failure" || !providers.Retryable(err) {
					t.Errorf("got %+v", r)
				}
			}},
		{"error message 400", nil, wsmock.Fault{}, 400,
			func(t *testing.T, err error) {
				if r := speechtest.AsType[*providers.Rejected](t, err); r.Status != 400 || providers.Retryable(err) {
					t.Errorf("got %+v", r)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, tc.mutate)
				if tc.fault.Kind != 0 {
					srv.Inject(tc.fault)
				}
				if tc.fail != 0 {
					srv.FailNext(tc.fail, "mock_failure")
				}
				s := speechtest.Connect(t, a.Connect)
				_ = s.Push("a", "secret words here")
				_ = s.Flush("a")
				err := speechtest.TTSFailure(t, s)
				tc.check(t, err)
				if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q holds the key or the text", err)
				}
				if err := s.Push("a", "more"); !errors.Is(err, providers.ErrClosed) {
					t.Errorf("Push after the failure: %v, want ErrClosed", err)
				}
			})
		})
	}
}

// Catches: a refused handshake that loses its status or is not a
// Rejected, the service's error code not kept as the detail.
func TestRefusedHandshake(t *testing.T) {
	for _, status := range []int{401, 429, 500, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				speechtest.CheckRefused(t, srv.Inject, a.Connect, status,
					`{"error_code":"invalid_api_key","title":"Invalid API key","message":"x"}`, "invalid_api_key")
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

// Catches: no deadline on the first audio, a deadline armed only for the
// first message or not moved by each message (the idle gap after it), a
// deadline started at the connect instead of the text, a hard-coded
// deadline (a slow answer inside it must get through whole).
func TestReplyDeadlines(t *testing.T) {
	cases := []struct {
		name  string
		pace  time.Duration
		fault wsmock.Fault
		fails bool
	}{
		{"first message stalled", 0, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 0}}, true},
		{"gap after the first message", time.Second, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1}}, true},
		{"gap before done", time.Second, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 4}}, true},
		{"slow first message", 0, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 0, Duration: testReply / 2}}, false},
		{"slow gap", 0, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 2, Duration: testReply - time.Millisecond}}, false},
		{"paced answer longer than the deadline", time.Second, wsmock.Fault{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				srv.SetVoice(cartesiamock.Voice{Pace: tc.pace})
				if tc.fault.Kind != 0 {
					srv.Inject(tc.fault)
				}
				s := speechtest.Connect(t, a.Connect)
				time.Sleep(5 * time.Second) // connected, nothing owed yet
				start := time.Now()
				_ = s.Push("a", "one two")
				_ = s.Flush("a")
				if !tc.fails {
					sum := summarize(until(t, s, providers.TTSFlushed, "a"))
					if len(sum.words) != 2 || sum.samples != 6400 {
						t.Errorf("slow answer cut: %+v", sum)
					}
					return
				}
				for range tc.fault.BeforeEvent {
					if ev, _ := speechtest.Next(t, s, 2*time.Second); ev.Err != nil {
						t.Fatal(ev.Err)
					}
					start = time.Now()
				}
				err := speechtest.TTSFailure(t, s)
				if tm := speechtest.AsType[*providers.Timeout](t, err); tm.Op != "reply" {
					t.Errorf("op %q", tm.Op)
				}
				if took := time.Since(start); took != testReply {
					t.Errorf("timed out %v after the stall began, want %v", took, testReply)
				}
			})
		})
	}
}

// A Flush after the service has answered every push arms the reply
// deadline: the common case of an LLM whose text was spoken while it
// streamed, flushed at the end of its answer. Catches: the flushing count
// raised before the deadline is armed (it then looks as if an answer were
// already owed, nothing arms it, and a service that never sends the done
// is waited for forever); found by the contract suite's idle check over
// the unpaced mock.
func TestFlushAfterAnAnsweredPushArmsTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		// "one two " is spoken without a flush: two timestamps and two
		// chunks; the done that answers the Flush is message 4.
		srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 4}})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "one two ")
		for i := range 4 {
			if ev, _ := speechtest.Next(t, s, time.Second); ev.Err != nil || ev.ContextID != "a" {
				t.Fatalf("event %d: %+v", i, ev)
			}
		}
		time.Sleep(2 * testReply) // nothing owed: the LLM may think
		start := time.Now()
		if err := s.Flush("a"); err != nil {
			t.Fatal(err)
		}
		err := speechtest.TTSFailure(t, s)
		if tm := speechtest.AsType[*providers.Timeout](t, err); tm.Op != "reply" {
			t.Errorf("op %q", tm.Op)
		}
		if took := time.Since(start); took != testReply {
			t.Errorf("timed out %v after the Flush, want %v", took, testReply)
		}
	})
}

// Push, Flush and Cancel on a session that failed return ErrClosed
// wrapping the failure; after Close, plain ErrClosed. Catches: the bare
// ErrClosed after a failure (the caller, and the contract suite's
// error_mapping when the failure falls between a Push and its Flush, then
// sees no Protocol or Disconnected), and a Close reported as a failure.
func TestCallsOnAnEndedSessionSayWhy(t *testing.T) {
	calls := []struct {
		name string
		call func(providers.TTSSession) error
	}{
		{"Push", func(s providers.TTSSession) error { return s.Push("b", "more ") }},
		{"Flush", func(s providers.TTSSession) error { return s.Flush("a") }},
		{"Cancel", func(s providers.TTSSession) error { return s.Cancel("a") }},
	}
	for _, c := range calls {
		t.Run(c.name+" after a failure", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol, BeforeEvent: 1}, Violation: wsmock.ViolateMalformed})
				s := speechtest.Connect(t, a.Connect)
				_ = s.Push("a", "one two ")
				speechtest.AsType[*providers.Protocol](t, speechtest.TTSFailure(t, s))
				err := c.call(s)
				speechtest.AsType[*providers.Protocol](t, err)
				if !errors.Is(err, providers.ErrClosed) {
					t.Errorf("%v is not ErrClosed", err)
				}
			})
		})
		t.Run(c.name+" after Close", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, _ := newPipe(t, nil)
				s := speechtest.Connect(t, a.Connect)
				_ = s.Push("a", "one ")
				_ = s.Close()
				if err := c.call(s); err != providers.ErrClosed {
					t.Errorf("got %v, want providers.ErrClosed itself", err)
				}
			})
		})
	}
}

// Catches: the pending queue's array growing for good while it is never
// empty (a long answer read a little behind the service).
func TestPendingQueueStaysSmall(t *testing.T) {
	s := newSession(&Config{}, nil)
	for range 10 {
		s.queueLocked(providers.TTSEvent{Kind: providers.TTSAudio})
	}
	for i := range 100000 {
		s.queueLocked(providers.TTSEvent{Kind: providers.TTSWord, Offset: time.Duration(i)})
		if ev, ok := s.pump.PopLocked(); !ok || (i >= 10 && ev.Offset != time.Duration(i-10)) {
			t.Fatalf("pop %d: %+v %v", i, ev, ok)
		}
	}
	if c := s.pump.CapLocked(); c > 512 {
		t.Errorf("queue array of %d for 11 live events", c)
	}
}

// Catches: a deadline on a context pushed but not flushed once the
// service answered (a slow LLM between two pushes would cut the
// session), and the cancelled context's debt surviving its cancel.
func TestNoDeadlineWhileTheCallerIsSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "First part, ")
		evs := until(t, s, providers.TTSAudio, "a")
		synctest.Wait()
		time.Sleep(10 * testReply) // the LLM thinks
		_ = s.Push("a", "second part.")
		_ = s.Flush("a")
		sum := summarize(append(evs, until(t, s, providers.TTSFlushed, "a")...))
		if len(sum.words) != 4 {
			t.Errorf("words %q", sum.words)
		}
	})
}

// Catches: a reply deadline that runs while the reader waits for our own
// consumer (a slow reader of Events is not the service's fault), events
// lost under backpressure.
func TestBackpressureIsNotATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := newPipe(t, func(c *Config) { c.EventBuffer, c.PendingEvents = 2, 4 })
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", strings.Repeat("word ", 10))
		_ = s.Flush("a")
		time.Sleep(5 * testReply) // nobody reads
		sum := summarize(until(t, s, providers.TTSFlushed, "a"))
		if len(sum.words) != 10 || sum.samples != 10*3200 {
			t.Errorf("%d words, %d samples after the backpressure", len(sum.words), sum.samples)
		}
	})
}

// Catches: a Close that hangs on a silent server beyond CloseTimeout, an
// Err event for a session the caller closed, events after Close, a
// goroutine left behind.
func TestCloseInTheMiddle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 2}})
		base := leaktest.Count()
		s, err := a.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Push("a", "one two three")
		_ = s.Flush("a")
		speechtest.Next(t, s, time.Second)
		start := time.Now()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > testClose {
			t.Errorf("Close took %v, over %v", took, testClose)
		}
		for ev := range s.Events() {
			if ev.Err != nil || ev.Kind == providers.TTSFlushed {
				t.Fatalf("event after Close: %+v", ev)
			}
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
		synctest.Wait()
		if n := leaktest.Count(); n > base {
			t.Errorf("%d goroutines after Close, %d before Connect", n, base)
		}
	})
}

// Catches: a session that outlives its context, or reports its
// cancellation as a failure, or leaves its delivery goroutine blocked on
// an Events channel nobody reads.
func TestContextEndsTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := newPipe(t, func(c *Config) { c.EventBuffer = 1 })
		base := leaktest.Count()
		ctx, cancel := context.WithCancel(context.Background())
		s, err := a.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Push("a", "one two three four")
		_ = s.Flush("a")
		synctest.Wait() // the pump is blocked on the full channel
		cancel()
		synctest.Wait()
		if n := leaktest.Count(); n > base {
			t.Errorf("%d goroutines after the context ended, %d before (Close not called)", n, base)
		}
		for ev := range s.Events() {
			if ev.Err != nil {
				t.Fatalf("Err event after cancel: %v", ev.Err)
			}
		}
		_ = s.Close()
	})
}

// Catches: Warm that leaves nothing for Connect (the connect dials anew).
func TestWarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dials speechtest.Dials
		a, srv := newPipe(t, func(c *Config) { c.DialContext = dials.Wrap(c.DialContext) })
		s := speechtest.CheckWarm(t, a.Warm, a.Connect, dials.Count, srv.Handshakes)
		// The session over the warmed connection speaks.
		_ = s.Push("a", "Hi.")
		_ = s.Flush("a")
		until(t, s, providers.TTSFlushed, "a")
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

// Catches: options Validate lets through.
func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"every option", Config{URL: "ws://h/x", SampleRate: 44100, Speed: 0.6, Volume: 2, Emotion: "calm", MaxBufferDelay: 5 * time.Second}, true},
		{"http URL", Config{URL: "http://h/x"}, false},
		{"query in URL", Config{URL: "wss://h/x?api_key=k"}, false},
		{"rate", Config{SampleRate: 11025}, false},
		{"speed", Config{Speed: 2}, false},
		{"volume", Config{Volume: 0.1}, false},
		{"buffer delay over 5 s", Config{MaxBufferDelay: 6 * time.Second}, false},
		{"both buffer settings", Config{MaxBufferDelay: time.Second, NoBufferDelay: true}, false},
		{"negative timeout", Config{ReplyTimeout: -1}, false},
		{"small message bound", Config{MaxMessageBytes: 100}, false},
		{"control character", Config{Voice: "a\nb"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate: %v", err)
			} else if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
		})
	}
}
