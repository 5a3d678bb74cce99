package dtmf_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// packetIn is one packet handed to the detector's owner goroutine.
type packetIn struct {
	seq     uint16
	ts      uint32
	marker  bool
	payload []byte
}

// owner is how a media session drives a Detector: one goroutine owns it,
// feeds it packets as they come, and arms a timer at its Deadline to
// report a press whose end packets were lost. It returns when in closes.
func owner(d *dtmf.Detector, in <-chan packetIn, out chan<- messages.DTMF) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var buf [2]messages.DTMF
	arm := func() {
		timer.Stop()
		if due, ok := d.Deadline(); ok {
			timer.Reset(time.Until(due))
		}
	}
	for {
		select {
		case p, ok := <-in:
			if !ok {
				return
			}
			presses, _ := d.Packet(buf[:0], p.seq, p.ts, p.marker, p.payload, time.Now())
			for _, pr := range presses {
				out <- pr
			}
			arm()
		case now := <-timer.C:
			if pr, ok := d.Expire(now); ok {
				out <- pr
			}
			arm()
		}
	}
}

// TestPollingInABubble runs the owner pattern in a synctest bubble: a
// press with an end arrives at once, a press without one arrives
// EndTimeout after its last packet (virtual time), Stats are read from
// the test goroutine meanwhile, and the owner leaves no goroutine.
// Mutation caught: a Deadline that is not EndTimeout after the last
// packet (the press comes at the wrong virtual time), a Stats that is not
// safe from another goroutine (the race detector).
func TestPollingInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := dtmf.New(dtmf.Config{})
		if err != nil {
			t.Fatal(err)
		}
		in := make(chan packetIn)
		out := make(chan messages.DTMF, 4)
		done := make(chan struct{})
		go func() { owner(d, in, out); close(done) }()
		defer func() { close(in); <-done }() // also when a check fails

		start := time.Now()
		in <- packetIn{1, 800, true, payload(1, false, 0)}
		in <- packetIn{2, 800, false, payload(1, true, 160)}
		synctest.Wait()
		if p := <-out; p.Digit != '1' || !p.At.Equal(start) {
			t.Fatalf("first press %+v", p)
		}
		in <- packetIn{3, 4000, true, payload(2, false, 0)}
		time.Sleep(100 * time.Millisecond)
		in <- packetIn{4, 4000, false, payload(2, false, 800)}
		last := time.Now()
		synctest.Wait()
		if s := d.Stats(); s.Packets != 4 || s.Presses != 1 {
			t.Fatalf("stats %+v", s)
		}
		time.Sleep(dtmf.DefaultEndTimeout - time.Millisecond)
		synctest.Wait()
		if len(out) != 0 {
			t.Fatalf("a press before the end timeout: %+v", <-out)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		select {
		case p := <-out:
			if p.Digit != '2' || p.Duration != 100*time.Millisecond || time.Since(last) != dtmf.DefaultEndTimeout {
				t.Fatalf("second press %+v, %v after the last packet", p, time.Since(last))
			}
		default:
			t.Fatal("no press at the end timeout")
		}
	})
}
