package bridge

import (
	"sync"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/sip/rtp"
)

// fakeLeg records what the bridge asks of a session.
type fakeLeg struct {
	mu       sync.Mutex
	relay    func(rtp.RelayedPacket)
	output   bool
	sent     int
	done     chan struct{}
	refusing bool
}

func newFakeLeg() *fakeLeg { return &fakeLeg{done: make(chan struct{})} }

func (f *fakeLeg) SetRelay(fn func(rtp.RelayedPacket)) {
	f.mu.Lock()
	f.relay = fn
	f.mu.Unlock()
}

func (f *fakeLeg) SetRelayOutput(on bool) {
	f.mu.Lock()
	f.output = on
	f.mu.Unlock()
}

func (f *fakeLeg) Relay(rtp.RelayedPacket) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refusing || !f.output {
		return false
	}
	f.sent++
	return true
}

func (f *fakeLeg) Done() <-chan struct{} { return f.done }
func (f *fakeLeg) Stats() rtp.Stats      { return rtp.Stats{Codec: rtp.CodecPCMU} }

func (f *fakeLeg) hooked() (bool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.relay != nil, f.output
}

// TestBridgeEndsWithALeg: when either session ends, the bridge ends by
// itself and both sessions are back in their normal mode; Stop after that
// is harmless. Mutation caught: a watcher that waits only for Stop leaves
// Done open (the test times out in the bubble).
func TestBridgeEndsWithALeg(t *testing.T) {
	for _, which := range []string{"a", "b"} {
		t.Run(which, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Snapshot()
				a, b := newFakeLeg(), newFakeLeg()
				br, err := newBridge(a, b, Config{})
				if err != nil {
					t.Fatal(err)
				}
				if err := br.Start(); err != nil {
					t.Fatal(err)
				}
				if err := br.Start(); err == nil {
					t.Fatal("a second Start was taken")
				}
				// a's inbound goes to b, which refuses it (dropped); b's
				// goes to a.
				b.mu.Lock()
				b.refusing = true
				b.mu.Unlock()
				a.relay(rtp.RelayedPacket{})
				b.relay(rtp.RelayedPacket{})
				if st := br.Stats(); st["a_to_b"] != 0 || st["b_to_a"] != 1 || st["dropped"] != 1 {
					t.Fatalf("stats %v", st)
				}
				if which == "a" {
					close(a.done)
				} else {
					close(b.done)
				}
				<-br.Done()
				for _, l := range []*fakeLeg{a, b} {
					if r, o := l.hooked(); r || o {
						t.Fatalf("a session left in relay mode (input %v, output %v)", r, o)
					}
				}
				br.Stop()
				synctest.Wait()
				if n := leaktest.Snapshot().NewSince(base); n != 0 {
					t.Fatalf("%d goroutines left", n)
				}
			})
		})
	}
}
