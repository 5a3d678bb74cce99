package sip

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
)

// TestTrunkModes: how a call's keys go out for each trunk DTMF mode and
// whether the far end negotiated telephone-event. Mutations caught (seen
// failing): rfc4733 without telephone-event falling back to INFO (the
// trunk said events only: the error row gets "info"); info sending events
// when negotiated (the row "info with events" gets "rfc4733").
func TestTrunkModes(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		events  bool
		want    string
		wantErr error
	}{
		{"auto with events", DTMFAuto, true, dtmfEvents, nil},
		{"auto without events", DTMFAuto, false, dtmfINFO, nil},
		{"unset is auto", "", true, dtmfEvents, nil},
		{"rfc4733 with events", DTMFRFC4733, true, dtmfEvents, nil},
		{"rfc4733 without events", DTMFRFC4733, false, "", conn.ErrNotSupported},
		{"info with events", DTMFInfo, true, dtmfINFO, nil},
		{"info without events", DTMFInfo, false, dtmfINFO, nil},
		{"unknown mode", "sms", true, "", ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dtmfWay(tt.mode, tt.events)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("dtmfWay(%q, %v) = %q, %v; want %q, %v", tt.mode, tt.events, got, err, tt.want, tt.wantErr)
			}
			if tt.wantErr == conn.ErrNotSupported && !errors.Is(err, rtp.ErrNoTelephoneEvent) {
				t.Errorf("%v does not wrap rtp.ErrNoTelephoneEvent", err)
			}
		})
	}
}

// TestDialWords: what the model reads of a second leg that was not
// answered. Catches a busy target reported as a plain failure.
func TestDialWords(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"busy", &signal.DialError{Outcome: signal.DialBusy, Code: 486}, "busy (486)"},
		{"not found", &signal.DialError{Outcome: signal.DialRejected, Code: 404}, "refused (404)"},
		{"ring timeout", &signal.DialError{Outcome: signal.DialNoAnswer}, "no answer (ring timeout)"},
		{"no response", &signal.DialError{Outcome: signal.DialTransport}, "no response from the trunk"},
		{"bad answer", fmt.Errorf("%w: no codec", signal.ErrBadAnswer), "the target answered with a codec the call cannot use"},
		{"limited", fmt.Errorf("%w: max_calls", ErrDialLimited), "the trunk's call limit is reached"},
		{"not a number", fmt.Errorf("%w: user part", ErrInvalidDial), "the target cannot be dialled through the trunk"},
		{"other", errors.New("x"), "the second call failed"},
	}
	for _, tt := range tests {
		if got := dialWords(tt.err); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// fakeEnd is a bridged leg that counts its bridge's endBridged.
type fakeEnd struct {
	mu   sync.Mutex
	ends int
}

func (f *fakeEnd) endBridged() { f.mu.Lock(); f.ends++; f.mu.Unlock() }
func (f *fakeEnd) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ends
}

// fakeRelay is a relay whose end the test decides (a leg's session
// ending ends the real one).
type fakeRelay struct {
	once sync.Once
	done chan struct{}
}

func (r *fakeRelay) Stop()                 { r.once.Do(func() { close(r.done) }) }
func (r *fakeRelay) Done() <-chan struct{} { return r.done }

func newFakeBridge() (*bridged, *fakeEnd, *fakeEnd, *fakeRelay) {
	a, b, r := &fakeEnd{}, &fakeEnd{}, &fakeRelay{done: make(chan struct{})}
	return &bridged{a: a, b: b, relay: r, stop: make(chan struct{})}, a, b, r
}

// TestBridgedEnds: the state of a bridged transfer. Either leg's end (its
// session ended: the relay's Done) hangs up and closes both, once; the
// server's close ends every bridge, waits for them and refuses new ones;
// nothing ends a bridge but those. Mutations caught (seen failing): end
// leaving out the second leg's endBridged (its call stays open: ended
// 0); close not waiting for the bridges (ended 0 right after close); a
// start after close taken (a bridge nobody ends: the bubble deadlocks).
func TestBridgedEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var set bridgeSet
		b1, a1, l1, r1 := newFakeBridge()
		b2, a2, l2, _ := newFakeBridge()
		if !set.start(b1) || !set.start(b2) {
			t.Fatal("a start refused")
		}
		synctest.Wait()
		for _, f := range []*fakeEnd{a1, l1, a2, l2} {
			if n := f.count(); n != 0 {
				t.Fatalf("a leg ended (%d) while its bridge runs", n)
			}
		}
		if set.len() != 2 {
			t.Fatalf("%d bridges live, want 2", set.len())
		}
		// The first bridge's caller hangs up: its session ends, so does
		// the relay.
		r1.Stop()
		synctest.Wait()
		for _, f := range []*fakeEnd{a1, l1} {
			if n := f.count(); n != 1 {
				t.Errorf("after a leg's end: a leg ended %d times, want 1", n)
			}
		}
		if set.len() != 1 {
			t.Errorf("%d bridges live after one ended, want 1", set.len())
		}
		set.close()
		for _, f := range []*fakeEnd{a2, l2} {
			if n := f.count(); n != 1 {
				t.Errorf("after the server's close: a leg ended %d times, want 1", n)
			}
		}
		if b3, _, _, _ := newFakeBridge(); set.start(b3) {
			t.Error("a bridge started after close")
		}
		if set.len() != 0 {
			t.Errorf("%d bridges live after close", set.len())
		}
		set.close() // twice is harmless
	})
}

// TestTransferTrunk: which trunk's transfer mode a call follows. Catches
// a call we placed following Config.TransferTrunk instead of its own
// trunk (it would bridge through a trunk it never used).
func TestTransferTrunk(t *testing.T) {
	trunks := map[string]TrunkConfig{
		"pbx":     {Transfer: TransferBridge},
		"carrier": {Transfer: TransferRefer},
	}
	tests := []struct {
		name   string
		call   *Call
		config string // Config.TransferTrunk
		want   string
		ok     bool
	}{
		{"came in, none set", &Call{}, "", "", false},
		{"came in, a transfer trunk", &Call{}, "pbx", "pbx", true},
		{"placed, its own trunk", &Call{outbound: true, trunkName: "carrier", trunkCfg: trunks["carrier"]}, "pbx", "carrier", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.srv = &Server{cfg: Config{Trunks: trunks, TransferTrunk: tt.config}}
			name, cfg, ok := tt.call.transferTrunk()
			if name != tt.want || ok != tt.ok || (ok && cfg.Transfer != trunks[tt.want].Transfer) {
				t.Errorf("transferTrunk() = %q (transfer %q), %v; want %q, %v", name, cfg.Transfer, ok, tt.want, tt.ok)
			}
		})
	}
}
