package deepgram

import (
	"bytes"
	"context"
	"encoding/binary"
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
	"github.com/brisvox/brisvox/providers/stt/deepgram/deepgrammock"
)

// Catches: a query option dropped or misspelled, the auth scheme wrong
// (Bearer, or the key in the query), a wrong path.
func TestHandshakeQueryAndAuth(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		want   url.Values
	}{
		{"defaults", nil, url.Values{
			"model": {"nova-3"}, "encoding": {"linear16"}, "sample_rate": {"16000"},
			"channels": {"1"}, "interim_results": {"true"},
		}},
		{"every option", func(c *Config) {
			c.Model, c.Language, c.SampleRate = "nova-2", "tr", 8000
			c.Endpointing, c.Punctuate, c.SmartFormat, c.VADEvents = 300*time.Millisecond, true, true, true
			c.UtteranceEnd, c.ProfanityFilter = 1500*time.Millisecond, true
		}, url.Values{
			"model": {"nova-2"}, "language": {"tr"}, "encoding": {"linear16"}, "sample_rate": {"8000"},
			"channels": {"1"}, "interim_results": {"true"}, "endpointing": {"300"}, "punctuate": {"true"},
			"smart_format": {"true"}, "vad_events": {"true"}, "utterance_end_ms": {"1500"}, "profanity_filter": {"true"},
		}},
		{"endpointing off, no interims", func(c *Config) { c.DisableEndpointing, c.NoInterimResults = true, true }, url.Values{
			"model": {"nova-3"}, "encoding": {"linear16"}, "sample_rate": {"16000"},
			"channels": {"1"}, "interim_results": {"false"}, "endpointing": {"false"},
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
				if r.Path != "/v1/listen" {
					t.Errorf("path %q", r.Path)
				}
				if got := r.Header.Get("Authorization"); got != "Token "+testKey {
					t.Errorf("Authorization %q, want the Token scheme with the key", got)
				}
				for k, v := range r.Query {
					if strings.Contains(strings.Join(v, ""), testKey) {
						t.Errorf("the key is in the query parameter %s", k)
					}
				}
				if !maps(r.Query, tc.want) {
					t.Errorf("query %v, want %v", r.Query, tc.want)
				}
			})
		})
	}
}

func maps(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// Catches: big-endian samples, a frame cut or merged, audio copied after
// SendAudio returned (the caller's buffer is overwritten at once here).
func TestAudioFramesArriveAsSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		s := speechtest.Connect(t, a.Connect)
		var want bytes.Buffer
		buf := make([]int16, 320)
		for i := range 5 {
			copy(buf, frame(320, int16(i*1000-2000)))
			if err := s.SendAudio(buf); err != nil {
				t.Fatal(err)
			}
			_ = binary.Write(&want, binary.LittleEndian, buf)
			clear(buf)
		}
		synctest.Wait() // Close drops what is still queued
		_ = s.Close()
		if got := srv.AudioFrames(); got != 5 {
			t.Errorf("%d frames, want 5", got)
		}
		if !bytes.Equal(srv.Audio(), want.Bytes()) {
			t.Error("the audio bytes differ from the little-endian PCM sent")
		}
	})
}

// Catches: interims dropped or marked final, the final's speech_final or
// from_finalize lost, Finalize not sent.
func TestInterimsThenFinalOnFinalize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.ScriptText("hello big world")
		s := speechtest.Connect(t, a.Connect)
		var got []providers.STTEvent
		for range 3 {
			if err := s.SendAudio(frame(320, 0)); err != nil {
				t.Fatal(err)
			}
			ev, _ := speechtest.Next(t, s, time.Second)
			got = append(got, ev)
		}
		if err := s.Finalize(); err != nil {
			t.Fatal(err)
		}
		ev, _ := speechtest.Next(t, s, time.Second)
		got = append(got, ev)
		want := []providers.STTEvent{
			{Text: "hello"}, {Text: "hello big"}, {Text: "hello big world"},
			{Text: "hello big world", Final: true, SpeechFinal: true, FromFinalize: true},
		}
		if !slices.Equal(got, want) {
			t.Fatalf("events\n%+v\nwant\n%+v", got, want)
		}
		if c := srv.Controls(); !slices.Contains(c, "Finalize") {
			t.Errorf("controls %v: no Finalize", c)
		}
	})
}

// Catches: an endpointed final (speech_final, not from_finalize) reported
// as from_finalize, or not as final.
func TestEndpointedFinal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.Script(deepgrammock.Utterance{Text: "yes", Endpointed: true})
		s := speechtest.Connect(t, a.Connect)
		for range 2 {
			_ = s.SendAudio(frame(160, 0))
		}
		first, _ := speechtest.Next(t, s, time.Second)
		second, _ := speechtest.Next(t, s, time.Second)
		if first != (providers.STTEvent{Text: "yes"}) {
			t.Errorf("first %+v", first)
		}
		if second != (providers.STTEvent{Text: "yes", Final: true, SpeechFinal: true}) {
			t.Errorf("second %+v", second)
		}
	})
}

// Catches: no KeepAlive while no audio flows (the service closes after
// 10 s), KeepAlive while audio flows, CloseStream not sent by Close, and
// a result deadline armed while nothing is owed (a quiet line must not
// time out).
func TestKeepAliveFinalizeCloseStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.ScriptText("hi")
		s := speechtest.Connect(t, a.Connect)
		// 9 s with audio every 20 ms: no KeepAlive.
		for range 450 {
			_ = s.SendAudio(frame(320, 0))
			time.Sleep(20 * time.Millisecond)
		}
		_ = s.Finalize()
		for {
			ev, _ := speechtest.Next(t, s, time.Second)
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			if ev.Final {
				break
			}
		}
		// A minute of quiet: a KeepAlive every 4 s, no timeout.
		time.Sleep(time.Minute + time.Second)
		select {
		case ev := <-s.Events():
			t.Fatalf("event during the quiet minute: %+v", ev)
		default:
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, ok := speechtest.Next(t, s, time.Second); ok {
			t.Fatal("Events not closed after Close")
		}
		// The mock records CloseStream on its session goroutine, which may
		// not have run yet when Close returns (without this wait the check
		// below failed about one run in 40).
		synctest.Wait()
		c := srv.Controls()
		ka := 0
		for _, x := range c {
			if x == "KeepAlive" {
				ka++
			}
		}
		if ka != 15 {
			t.Errorf("%d KeepAlives in 61 s of quiet, want 15 (every 4 s): %v", ka, c)
		}
		if c[0] != "Finalize" || c[len(c)-1] != "CloseStream" {
			t.Errorf("controls %v: want Finalize first (no KeepAlive while audio flowed) and CloseStream last", c)
		}
	})
}

// Catches: each failure mapped to the wrong typed error, a failure that
// ends the session without its Err event, events after the Err.
func TestServerFaultsMapToTypedErrors(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		fault  wsmock.Fault
		check  func(t *testing.T, err error)
	}{
		{"malformed JSON", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol}, Violation: wsmock.ViolateMalformed},
			func(t *testing.T, err error) { speechtest.AsType[*providers.Protocol](t, err) }},
		{"binary from the server", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol}, Violation: wsmock.ViolateBinary},
			func(t *testing.T, err error) { speechtest.AsType[*providers.Protocol](t, err) }},
		{"oversized message", func(c *Config) { c.MaxMessageBytes = 4096 }, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol}, Violation: wsmock.ViolateOversized},
			func(t *testing.T, err error) {
				if p := speechtest.AsType[*providers.Protocol](t, err); !strings.Contains(p.Detail, "4096") {
					t.Errorf("detail %q does not name the limit", p.Detail)
				}
			}},
		{"connection cut", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect}},
			func(t *testing.T, err error) { speechtest.AsType[*providers.Disconnected](t, err) }},
		{"cut after the first result", nil, wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 1}},
			func(t *testing.T, err error) { speechtest.AsType[*providers.Disconnected](t, err) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, tc.mutate)
				srv.ScriptText("one two three")
				srv.Inject(tc.fault)
				s := speechtest.Connect(t, a.Connect)
				for range 3 {
					_ = s.SendAudio(frame(320, 0))
				}
				err := speechtest.STTFailure(t, s)
				tc.check(t, err)
				if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "one") {
					t.Errorf("error %q holds the key or the transcript", err)
				}
				if err := s.SendAudio(frame(10, 0)); !errors.Is(err, providers.ErrClosed) {
					t.Errorf("SendAudio after the failure: %v, want ErrClosed", err)
				}
			})
		})
	}
}

// Catches: a refused handshake that loses its status or is not a
// Rejected, the service's error code not kept as the detail.
func TestRefusedHandshake(t *testing.T) {
	for _, status := range []int{401, 429, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				speechtest.CheckRefused(t, srv.Inject, a.Connect, status,
					`{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"x"}`, "INVALID_AUTH")
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

// Catches: no deadline on the first result, a deadline armed only for the
// first result (the idle gap after it), a deadline started at the wrong
// point (connect instead of the audio, the first audio instead of the
// last message).
func TestResultDeadlines(t *testing.T) {
	cases := []struct {
		name   string
		before int
	}{
		{"first result", 0},
		{"gap after the first interim", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, srv := newPipe(t, nil)
				srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: tc.before}})
				s := speechtest.Connect(t, a.Connect)
				time.Sleep(5 * time.Second) // connected, nothing owed yet
				if tc.before == 1 {
					// Audio the mock does not answer (nothing scripted
					// yet), a second before the first event: a deadline
					// left where this audio armed it fires a second early.
					_ = s.SendAudio(frame(320, 0))
					time.Sleep(time.Second)
				}
				srv.ScriptText("one two three")
				start := time.Now()
				for range 3 {
					_ = s.SendAudio(frame(320, 0))
				}
				if tc.before == 1 {
					if ev, _ := speechtest.Next(t, s, time.Second); ev.Text != "one" {
						t.Fatalf("first event %+v", ev)
					}
					start = time.Now()
				}
				err := speechtest.STTFailure(t, s)
				if tm := speechtest.AsType[*providers.Timeout](t, err); tm.Op != "result" {
					t.Errorf("op %q", tm.Op)
				}
				if took := time.Since(start); took != testResult {
					t.Errorf("timed out %v after the stall began, want %v", took, testResult)
				}
			})
		})
	}
}

// Catches: a Close that hangs on a silent server beyond CloseTimeout, an
// Err event for a session the caller closed, events after Close.
func TestCloseInTheMiddle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.ScriptText("one two three")
		srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1}})
		s := speechtest.Connect(t, a.Connect)
		for range 3 {
			_ = s.SendAudio(frame(320, 0))
		}
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > testClose {
			t.Errorf("Close took %v, over %v", took, testClose)
		}
		for ev := range s.Events() {
			if ev.Err != nil {
				t.Fatalf("Err event after Close: %v", ev.Err)
			}
			if ev.Text != "one" {
				t.Fatalf("unexpected event %+v", ev)
			}
		}
		if err := s.SendAudio(frame(10, 0)); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("SendAudio after Close: %v", err)
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
		a, _ := newPipe(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		s, err := a.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_ = s.SendAudio(frame(320, 0))
		cancel()
		for ev := range s.Events() {
			if ev.Err != nil {
				t.Fatalf("Err event after cancel: %v", ev.Err)
			}
		}
	})
}

// Catches: a service close with 1008 (audio it cannot decode) mapped as a
// retryable drop.
func TestServiceClose1008IsProtocol(t *testing.T) {
	if got := mapClose(1008, "DATA-0000"); !errors.Is(got, providers.ErrProtocol) {
		t.Errorf("1008: %v", got)
	}
	if got := mapClose(1011, "NET-0001"); !errors.Is(got, providers.ErrDisconnected) {
		t.Errorf("1011: %v", got)
	}
}

// Catches: Warm that leaves nothing for Connect (the connect dials anew:
// counted in dials). (A kept connection the server dropped is not
// exercised here: the mock cannot drop an idle connection cheaply.)
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
