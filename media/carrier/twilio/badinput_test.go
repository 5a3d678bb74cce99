package twilio

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// survives checks that the call still works: a media chunk sent now
// comes out of ReadFrame.
func survives(t *testing.T, f *fakeTwilio, call *Call) {
	t.Helper()
	mu := mulawOf(tone(0, 160))
	f.media(mu, -1, -1)
	fr := messages.NewPooledFrame(Rate, nil)
	if err := call.ReadFrame(context.Background(), fr); err != nil {
		t.Fatalf("the call did not survive: %v", err)
	}
	if fr.PCM[5] != heard(mu)[5] {
		t.Fatal("the frame after the bad message is not the chunk sent")
	}
}

// endsWith checks that ReadFrame ends with ErrClosed saying why.
func endsWith(t *testing.T, call *Call, reason string) {
	t.Helper()
	fr := messages.NewPooledFrame(Rate, nil)
	for {
		err := call.ReadFrame(context.Background(), fr)
		if err == nil {
			continue
		}
		if !errors.Is(err, conn.ErrClosed) || !strings.Contains(err.Error(), reason) {
			t.Fatalf("ReadFrame ended with %v, want ErrClosed with %q", err, reason)
		}
		return
	}
}

// closedWith checks the close frame the client got.
func closedWith(t *testing.T, f *fakeTwilio, code websocket.StatusCode, reason string) {
	t.Helper()
	ce := f.readClose()
	if ce.Code != code || !strings.Contains(ce.Reason, reason) {
		t.Fatalf("closed with %d %q, want %d %q", ce.Code, ce.Reason, code, reason)
	}
}

// TestBadInput: each kind of bad input is counted and either skipped
// (the call goes on) or ends the stream with a clear close code and
// reason and ErrClosed from ReadFrame; no goroutine is left (inBubble).
// Mutations caught (each seen failing): oversized messages ending the
// call instead of being skipped (no read-away of the rest), Bad not
// counting a run (too_many_bad never reached), the start timer not armed,
// the idle timer not restarted as Live, the media-format check off, Admit
// not consulted, the registry not hanging up live calls on Close.
func TestBadInput(t *testing.T) {
	refuse := errors.New("full")
	cases := []struct {
		name string
		cfg  Config
		run  func(t *testing.T, r *rig)
		want map[string]uint64
	}{
		{name: "malformed JSON", run: func(t *testing.T, r *rig) {
			f, call := r.open()
			f.sendRaw(websocket.MessageText, []byte(`{"event":`))
			survives(t, f, call)
		}, want: map[string]uint64{"bad_json": 1, "calls": 1}},
		{name: "unknown event", run: func(t *testing.T, r *rig) {
			f, call := r.open()
			f.sendRaw(websocket.MessageText, []byte(`{"event":"flush","streamSid":"x"}`))
			survives(t, f, call)
		}, want: map[string]uint64{"unknown_events": 1}},
		{name: "bad base64", run: func(t *testing.T, r *rig) {
			f, call := r.open()
			f.sendRaw(websocket.MessageText, []byte(`{"event":"media","media":{"payload":"!!!!"}}`))
			survives(t, f, call)
		}, want: map[string]uint64{"bad_payload": 1}},
		{name: "binary garbage", run: func(t *testing.T, r *rig) {
			f, call := r.open()
			f.sendRaw(websocket.MessageBinary, []byte{0xde, 0xad, 0xbe, 0xef})
			survives(t, f, call)
		}, want: map[string]uint64{"binary_messages": 1}},
		{name: "oversized", cfg: Config{Limits: Limits{MaxMessageBytes: 1024}}, run: func(t *testing.T, r *rig) {
			f, call := r.open()
			f.sendRaw(websocket.MessageText, []byte(`{"event":"media","pad":"`+strings.Repeat("x", 2000)+`"}`))
			survives(t, f, call)
		}, want: map[string]uint64{"oversized": 1}},
		{name: "far oversized", cfg: Config{Limits: Limits{MaxMessageBytes: 1024}}, run: func(t *testing.T, r *rig) {
			f, call := r.open()
			_ = f.ws.Write(context.Background(), websocket.MessageText, make([]byte, 9*1024))
			closedWith(t, f, websocket.StatusMessageTooBig, "")
			endsWith(t, call, "a message over 8192 bytes")
		}, want: map[string]uint64{"vanished": 0, "oversized": 1}},
		{name: "wrong media format", run: func(t *testing.T, r *rig) {
			f := r.dial()
			f.connected()
			f.start("audio/l16", 16000, 1, nil)
			closedWith(t, f, websocket.StatusUnsupportedData, "media format")
		}, want: map[string]uint64{"bad_media_format": 1, "calls": 0}},
		{name: "no start in time", run: func(t *testing.T, r *rig) {
			f := r.dial()
			f.connected()
			began := time.Now()
			closedWith(t, f, websocket.StatusPolicyViolation, "no start")
			if waited := time.Since(began); waited != DefaultStartTimeout {
				t.Fatalf("closed after %v, want %v", waited, DefaultStartTimeout)
			}
		}, want: map[string]uint64{"start_timeouts": 1, "calls": 0}},
		{name: "too many bad messages", cfg: Config{Limits: Limits{MaxBadMessages: 3}}, run: func(t *testing.T, r *rig) {
			f, call := r.open()
			for range 3 {
				f.sendRaw(websocket.MessageText, []byte(`nope`))
			}
			closedWith(t, f, websocket.StatusPolicyViolation, "too many bad messages")
			endsWith(t, call, "too many bad messages")
		}, want: map[string]uint64{"bad_json": 3, "too_many_bad": 1}},
		{name: "bad run broken by a good message", cfg: Config{Limits: Limits{MaxBadMessages: 2}}, run: func(t *testing.T, r *rig) {
			f, call := r.open()
			f.sendRaw(websocket.MessageText, []byte(`nope`))
			survives(t, f, call)
			f.sendRaw(websocket.MessageText, []byte(`nope`))
			survives(t, f, call)
		}, want: map[string]uint64{"bad_json": 2, "too_many_bad": 0}},
		{name: "vanished mid-call", run: func(t *testing.T, r *rig) {
			f, call := r.open()
			_ = f.ws.CloseNow()
			endsWith(t, call, "the connection was lost")
		}, want: map[string]uint64{"vanished": 1}},
		{name: "silent peer", run: func(t *testing.T, r *rig) {
			_, call := r.open()
			began := time.Now()
			endsWith(t, call, "no message for 10s")
			if waited := time.Since(began); waited != DefaultIdleTimeout {
				t.Fatalf("ended after %v, want %v", waited, DefaultIdleTimeout)
			}
			<-call.Done()
			if !errors.Is(call.Err(), conn.ErrSilentInput) {
				t.Fatalf("end %v, want ErrSilentInput", call.Err())
			}
		}, want: map[string]uint64{"silent_input": 1}},
		{name: "not admitted", cfg: Config{Admit: func() (conn.Admission, error) { return nil, refuse }}, run: func(t *testing.T, r *rig) {
			_, resp, err := r.srv.Dial(context.Background(), "/twilio")
			if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("dial of a refused stream: %v", err)
			}
		}, want: map[string]uint64{"refused": 1, "upgrades": 0}},
		{name: "handler closed", run: func(t *testing.T, r *rig) {
			f, call := r.open()
			closed := make(chan struct{})
			go func() { r.h.Close(); close(closed) }()
			closedWith(t, f, websocket.StatusGoingAway, "shutting down")
			<-closed
			<-call.Done()
			if r.h.Live() != 0 {
				t.Fatalf("%d live calls after Close", r.h.Live())
			}
			_, resp, err := r.srv.Dial(context.Background(), "/twilio")
			if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("dial after Close: %v", err)
			}
		}, want: map[string]uint64{"refused": 1, "hangups": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, tc.cfg, func(r *rig) {
				tc.run(t, r)
				st := r.h.Stats()
				for k, v := range tc.want {
					if st[k] != v {
						t.Errorf("%s = %d, want %d", k, st[k], v)
					}
				}
			})
		})
	}
}

// TestCounterNames: every counter the package's code increments is
// registered (an unregistered name would be silently ignored).
// Mutation caught: a counter name misspelt in the code.
func TestCounterNames(t *testing.T) {
	h, err := New(Config{OnCall: func(*Call) {}})
	if err != nil {
		t.Fatal(err)
	}
	used := carriertest.UsedCounterNames(t, ".", "../internal/wscall")
	st := h.Stats()
	for _, n := range used {
		if _, ok := st[n]; !ok {
			t.Errorf("counter %q is used but not registered", n)
		}
	}
}
