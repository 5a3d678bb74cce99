package aura

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/providers/tts/deepgram/auramock"
)

// Catches: a wrong path or query member, the key not sent as a Token, the
// key in the URL, the sample rate not the configured one.
func TestHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, func(c *Config) { c.Model = "aura-2-zeus-en"; c.SampleRate = 24000 })
		s := speechtest.Connect(t, a.Connect)
		_ = s.Close()
		reqs := srv.Server.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d handshakes", len(reqs))
		}
		r := reqs[0]
		if r.Path != auramock.Path {
			t.Errorf("path %q", r.Path)
		}
		want := map[string]string{"model": "aura-2-zeus-en", "encoding": "linear16", "sample_rate": "24000"}
		for k, v := range want {
			if got := r.Query.Get(k); got != v {
				t.Errorf("%s=%q, want %q", k, got, v)
			}
		}
		if len(r.Query) != len(want) {
			t.Errorf("query %v, want only %v", r.Query, want)
		}
		if got := r.Header.Get("Authorization"); got != "Token "+testKey {
			t.Errorf("Authorization %q", got)
		}
		if strings.Contains(r.Query.Encode(), testKey) {
			t.Error("the key is in the query")
		}
	})
}

// The messages each flush policy sends, and the audio of a context up to
// its Flushed. Catches: PerText not flushing each Push, PerTurn flushing
// a Push, a second Flush sent by Flush under PerText when nothing is
// unflushed, Flushed emitted at the first of several server Flushed,
// audio dropped or misconverted, a Word event made up.
func TestFlushPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy FlushPolicy
		want   []string
	}{
		{PerTurn, []string{"Speak", "Speak", "Flush", "Close"}},
		{PerText, []string{"Speak", "Flush", "Speak", "Flush", "Close"}},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, func(c *Config) { c.FlushPolicy = tc.policy })
				srv.SetVoice(auramock.Voice{WordDuration: 100 * time.Millisecond, ChunksPerWord: 2})
				s := speechtest.Connect(t, a.Connect)
				for _, p := range []string{"hello there ", "big world"} {
					if err := s.Push("a", p); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Flush("a"); err != nil {
					t.Fatal(err)
				}
				sp := untilFlushed(t, s, "a")
				if n := wordSamples(DefaultSampleRate, 100*time.Millisecond); len(sp.samples) != 4*n || sp.frames != 8 {
					t.Errorf("%d samples in %d frames, want %d in 8", len(sp.samples), sp.frames, 4*n)
				}
				for i, v := range sp.samples[:10] {
					if want := int16(i%2000 - 1000); v != want {
						t.Fatalf("sample %d is %d, want %d", i, v, want)
					}
				}
				_ = s.Close()
				synctest.Wait() // the mock records the Close on its own goroutine
				if got := types(srv); !slices.Equal(got, tc.want) {
					t.Errorf("sent %q, want %q", got, tc.want)
				}
				var texts []string
				for _, r := range srv.Requests() {
					if r.Type == "Speak" {
						texts = append(texts, r.Text)
					}
				}
				if !slices.Equal(texts, []string{"hello there ", "big world"}) {
					t.Errorf("texts %q", texts)
				}
			})
		})
	}
}

// Frames of odd sizes (a sample cut across two frames) join into the same
// samples. Catches: the odd byte dropped or not carried.
func TestOddFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetVoice(auramock.Voice{WordDuration: 100 * time.Millisecond, OddFrames: true})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "one two three")
		_ = s.Flush("a")
		sp := untilFlushed(t, s, "a")
		n := wordSamples(DefaultSampleRate, 100*time.Millisecond)
		if len(sp.samples) != 3*n {
			t.Fatalf("%d samples, want %d", len(sp.samples), 3*n)
		}
		for i, v := range sp.samples {
			if want := int16(i%n%2000 - 1000); v != want {
				t.Fatalf("sample %d is %d, want %d", i, v, want)
			}
		}
	})
}

// Two contexts take turns on the one stream: the second's text waits
// until the first is Flushed, then goes out joined. Catches: the second
// context sent at once (its audio would be taken for the first's), a
// held text lost, the Flushed order wrong.
func TestContextsInTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetVoice(auramock.Voice{WordDuration: 100 * time.Millisecond, Pace: 20 * time.Millisecond})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "first answer ")
		_ = s.Push("b", "second ")
		_ = s.Push("b", "answer here")
		_ = s.Flush("b")
		synctest.Wait()
		if got := types(srv); !slices.Equal(got, []string{"Speak"}) {
			t.Fatalf("before a's Flush: sent %q, want only a's Speak", got)
		}
		_ = s.Flush("a")
		spA := untilFlushed(t, s, "a")
		spB := untilFlushed(t, s, "b")
		n := wordSamples(DefaultSampleRate, 100*time.Millisecond)
		if len(spA.samples) != 2*n || len(spB.samples) != 3*n {
			t.Errorf("a %d samples, b %d; want %d and %d", len(spA.samples), len(spB.samples), 2*n, 3*n)
		}
		reqs := srv.Requests()
		if got := types(srv); !slices.Equal(got, []string{"Speak", "Flush", "Speak", "Flush"}) {
			t.Fatalf("sent %q", got)
		}
		if reqs[2].Text != "second answer here" {
			t.Errorf("b went out as %q", reqs[2].Text)
		}
	})
}

// A context flushed without text is Flushed in its turn without a
// message; a Push after Flush is refused; ids must not be empty; an ended
// session refuses everything. Catches: an empty Flush sent (the service
// would answer nothing to wait for), Flushed of an empty context ahead of
// the context speaking.
func TestContextRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "hello")
		if err := s.Flush("empty"); err != nil {
			t.Fatal(err)
		}
		_ = s.Flush("a")
		if err := s.Push("a", "more"); !errors.Is(err, ErrContextClosed) {
			t.Errorf("Push after Flush: %v", err)
		}
		untilFlushed(t, s, "a")
		if ev, _ := speechtest.Next(t, s, time.Second); ev.Kind != providers.TTSFlushed || ev.ContextID != "empty" {
			t.Errorf("after a: %+v, want the Flushed of the empty context", ev)
		}
		if got := types(srv); !slices.Equal(got, []string{"Speak", "Flush"}) {
			t.Errorf("sent %q", got)
		}
		for name, err := range map[string]error{"push": s.Push("", "x"), "flush": s.Flush(""), "cancel": s.Cancel("")} {
			if !errors.Is(err, ErrEmptyContextID) {
				t.Errorf("%s with an empty id: %v", name, err)
			}
		}
		_ = s.Close()
		if err := s.Push("c", "x"); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("Push after Close: %v", err)
		}
		if _, ok := <-s.Events(); ok {
			t.Error("an event after Close")
		}
	})
}

// Cancel clears the context on the wire: Clear goes out, the ack comes at
// once, nothing of the context follows it (what the service still sends
// before Cleared is dropped), and the next context goes out after
// Cleared and speaks. Catches: no Clear sent, the ack waiting for
// Cleared, the next context sent before Cleared (IgnoreClear makes the
// mock send all of the cancelled context's audio before Cleared: it would
// be taken for the next one's).
func TestCancel(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		name := "clears"
		if ignore {
			name = "finishes_first"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				srv.SetVoice(auramock.Voice{WordDuration: 100 * time.Millisecond, Pace: 40 * time.Millisecond, IgnoreClear: ignore})
				s := speechtest.Connect(t, a.Connect)
				_ = s.Push("a", strings.Repeat("word ", 30))
				_ = s.Flush("a")
				if ev, _ := speechtest.Next(t, s, time.Minute); ev.Kind != providers.TTSAudio || ev.ContextID != "a" {
					t.Fatalf("first event %+v", ev)
				}
				start := time.Now()
				if err := s.Cancel("a"); err != nil {
					t.Fatal(err)
				}
				_ = s.Push("b", "next answer")
				_ = s.Flush("b")
				for {
					ev, _ := speechtest.Next(t, s, time.Minute)
					if ev.Kind == providers.TTSCancelled {
						if ev.ContextID != "a" || time.Since(start) != 0 {
							t.Fatalf("ack %+v after %v", ev, time.Since(start))
						}
						break
					}
					if ev.ContextID != "a" || ev.Kind != providers.TTSAudio {
						t.Fatalf("before the ack: %+v", ev)
					}
				}
				sp := untilFlushed(t, s, "b")
				if n := wordSamples(DefaultSampleRate, 100*time.Millisecond); len(sp.samples) != 2*n {
					t.Errorf("b: %d samples, want %d", len(sp.samples), 2*n)
				}
				got := types(srv)
				if !slices.Equal(got, []string{"Speak", "Flush", "Clear", "Speak", "Flush"}) {
					t.Errorf("sent %q", got)
				}
				st, _ := StatsOf(s)
				if ignore && st.Dropped < 20 {
					t.Errorf("dropped %d messages of the cancelled context, want its rest", st.Dropped)
				}
			})
		})
	}
}

// Cancel of a context waiting its turn lets its text go without a
// message; cancelling an unknown context is acknowledged. Catches: a
// Clear sent for a context not on the wire (it would clear the one
// speaking).
func TestCancelWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "hello there")
		_ = s.Push("b", "waiting")
		_ = s.Cancel("b")
		_ = s.Cancel("nobody")
		_ = s.Flush("a")
		var acks []string
		for range 2 {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Kind != providers.TTSCancelled {
				t.Fatalf("%+v, want acks first", ev)
			}
			acks = append(acks, ev.ContextID)
		}
		untilFlushed(t, s, "a")
		if !slices.Equal(acks, []string{"b", "nobody"}) {
			t.Errorf("acks %q", acks)
		}
		if got := types(srv); !slices.Equal(got, []string{"Speak", "Flush"}) {
			t.Errorf("sent %q", got)
		}
	})
}

// Failures map to the typed errors. Catches: a refusal without its
// status or the service's code, a malformed or oversized message not a
// Protocol, an Error message ignored, a close 1008 not a Protocol, a drop
// not a Disconnected.
func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault wsmock.Fault
		fail  string // auramock.FailNext code
		check func(t *testing.T, err error)
	}{
		{name: "refused_401", fault: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultReject, Status: 401}, RefuseBody: `{"err_code":"INVALID_AUTH","err_msg":"x"}`},
			check: func(t *testing.T, err error) {
				if r := speechtest.AsType[*providers.Rejected](t, err); r.Status != 401 || r.Detail != "INVALID_AUTH" || r.Retryable() {
					t.Errorf("%+v", r)
				}
			}},
		{name: "refused_429", fault: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultReject, Status: 429}},
			check: func(t *testing.T, err error) {
				if r := speechtest.AsType[*providers.Rejected](t, err); r.Status != 429 || !r.Retryable() {
					t.Errorf("%+v", r)
				}
			}},
		{name: "malformed", fault: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol, BeforeEvent: 1}, Violation: wsmock.ViolateMalformed},
			check: func(t *testing.T, err error) { speechtest.AsType[*providers.Protocol](t, err) }},
		{name: "oversized", fault: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol, BeforeEvent: 1}, Violation: wsmock.ViolateOversized},
			check: func(t *testing.T, err error) { speechtest.AsType[*providers.Protocol](t, err) }},
		{name: "dropped", fault: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 1}},
			check: func(t *testing.T, err error) { speechtest.AsType[*providers.Disconnected](t, err) }},
		{name: "error_message", fail: "BAD_REQUEST",
			check: func(t *testing.T, err error) {
				if p := speechtest.AsType[*providers.Protocol](t, err); !strings.Contains(p.Detail, "BAD_REQUEST") {
					t.Errorf("%v", p)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				if tc.fault.Kind != 0 {
					srv.Inject(tc.fault)
				}
				if tc.fail != "" {
					srv.FailNext(tc.fail)
				}
				s, err := a.Connect(context.Background())
				if err == nil {
					defer s.Close()
					_ = s.Push("a", "one two three")
					_ = s.Flush("a")
					_, err = failure(t, s)
				}
				tc.check(t, err)
				if strings.Contains(err.Error(), testKey) {
					t.Error("the key is in the error")
				}
			})
		})
	}
}

// The service closing with 1008 (a message it could not take) is a
// Protocol error. Catches: mapClose not installed.
func TestCloseCodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		ss := s.(*session)
		ss.mu.Lock()
		_ = ss.ws.Send(false, []byte("not json")) // the mock closes with 1008
		ss.mu.Unlock()
		_, err := failure(t, s)
		if p := speechtest.AsType[*providers.Protocol](t, err); !strings.Contains(p.Detail, "1008") {
			t.Errorf("%v", p)
		}
	})
}

// Deadlines: a Flush unanswered is a Timeout at ReplyTimeout from the
// Flush, and a gap after audio at ReplyTimeout from the last message; a
// slow connect past ConnectTimeout is a Timeout. Catches: the deadline
// armed only for the first message, or not re-armed on each message.
func TestDeadlines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before int
	}{{"first_message", 0}, {"gap_after_audio", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				srv.SetVoice(auramock.Voice{Pace: 100 * time.Millisecond})
				srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: tc.before}})
				s := speechtest.Connect(t, a.Connect)
				_ = s.Push("a", "one two three four")
				_ = s.Flush("a")
				last := time.Now()
				for range tc.before {
					if ev, _ := speechtest.Next(t, s, time.Minute); ev.Kind != providers.TTSAudio {
						t.Fatalf("%+v", ev)
					}
					last = time.Now()
				}
				at, err := failure(t, s)
				if to := speechtest.AsType[*providers.Timeout](t, err); to.Op != "reply" || at.Sub(last) != testReply {
					t.Errorf("%v after %v, want reply after %v", to, at.Sub(last), testReply)
				}
			})
		})
	}
	t.Run("connect", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a, srv := newPipe(t, nil)
			srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultConnectStall}})
			start := time.Now()
			_, err := a.Connect(context.Background())
			if speechtest.AsType[*providers.Timeout](t, err); time.Since(start) != testConnect {
				t.Errorf("after %v", time.Since(start))
			}
		})
	})
}

// The ping probe under PerTurn: a held text on a hung server (no pong) is
// a Timeout{ping} at ReplyTimeout from the Push; on a live server the
// held text waits three deadlines (a slow LLM) without harm and is spoken
// after the Flush; nothing is pinged while an answer is owed or nothing
// is held. Catches: no probe (the hung server is waited on for good), a
// reply deadline armed by a held text (the live case times out), pings
// that go on after the Flush or with nothing held, a probe that never
// pings again after its first pong (only one ping in the live case).
func TestProbe(t *testing.T) {
	t.Run("hung_server", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a, srv := newPipe(t, nil)
			srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall}, NoPong: true})
			s := speechtest.Connect(t, a.Connect)
			_ = s.Push("a", "held text")
			start := time.Now()
			at, err := failure(t, s)
			if to := speechtest.AsType[*providers.Timeout](t, err); to.Op != "ping" || at.Sub(start) != testReply {
				t.Errorf("%v after %v, want ping after %v", to, at.Sub(start), testReply)
			}
		})
	})
	t.Run("live_server", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a, srv := newPipe(t, nil)
			s := speechtest.Connect(t, a.Connect)
			time.Sleep(3 * testReply) // nothing held: no ping
			if srv.Pings() != 0 {
				t.Fatalf("%d pings with nothing held", srv.Pings())
			}
			_ = s.Push("a", "the slow ")
			time.Sleep(3 * testReply)
			st, _ := StatsOf(s)
			if st.Pongs < 3 || st.Pings != st.Pongs {
				t.Errorf("%+v: want a pong every %v", st, DefaultProbeInterval)
			}
			_ = s.Push("a", "llm")
			_ = s.Flush("a")
			untilFlushed(t, s, "a")
			pings := srv.Pings()
			time.Sleep(3 * testReply)
			if srv.Pings() != pings {
				t.Errorf("%d pings after the Flush", srv.Pings()-pings)
			}
		})
	})
	t.Run("per_text_no_probe", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a, srv := newPipe(t, func(c *Config) { c.FlushPolicy = PerText })
			s := speechtest.Connect(t, a.Connect)
			_ = s.Push("a", "spoken at once ")
			for {
				if ev, _ := speechtest.Next(t, s, time.Minute); ev.Kind == providers.TTSAudio {
					break
				}
			}
			time.Sleep(3 * testReply)
			if srv.Pings() != 0 {
				t.Errorf("%d pings under PerText", srv.Pings())
			}
		})
	})
}

// Warnings (a flush over the service's limit) are counted and end
// nothing. Catches: a Warning taken for a failure.
func TestWarningCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, func(c *Config) { c.ReplyTimeout = time.Hour })
		srv.SetVoice(auramock.Voice{FlushLimit: 1})
		s := speechtest.Connect(t, a.Connect)
		_ = s.Push("a", "first")
		_ = s.Flush("a")
		untilFlushed(t, s, "a")
		_ = s.Push("b", "second")
		_ = s.Flush("b")
		synctest.Wait()
		st, _ := StatsOf(s)
		if st.Warnings != 1 {
			t.Errorf("%d warnings", st.Warnings)
		}
		select {
		case ev := <-s.Events():
			t.Errorf("after the warning: %+v", ev)
		default:
		}
	})
}

// Catches: a config the service cannot take accepted, the key read from
// anywhere but the named variable.
func TestConfig(t *testing.T) {
	for name, c := range map[string]Config{
		"http_url":      {URL: "https://api.deepgram.com/v1/speak"},
		"url_query":     {URL: "wss://h/v1/speak?model=x"},
		"rate":          {SampleRate: 22050},
		"policy":        {FlushPolicy: 7},
		"negative":      {ReplyTimeout: -1},
		"model_query":   {Model: "a&b"},
		"small_message": {MaxMessageBytes: 10},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	t.Setenv("BRISVOX_TEST_AURA_EMPTY", "")
	if _, err := New(Config{APIKeyEnv: "BRISVOX_TEST_AURA_EMPTY"}); !errors.Is(err, ErrMissingKey) || strings.Contains(err.Error(), testKey) {
		t.Errorf("missing key: %v", err)
	}
	if got := (Config{}).withDefaults().speakURL(); got != "wss://api.deepgram.com/v1/speak?encoding=linear16&model=aura-2-thalia-en&sample_rate=16000" {
		t.Errorf("default URL %s", got)
	}
}
