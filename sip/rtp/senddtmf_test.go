package rtp

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// readBack feeds the telephone-event packets of got to a fresh Detector
// and returns the digits, the event packets, and the stream's packets.
func readBack(t *testing.T, got []dgram, eventPT uint8, want time.Duration) (string, []media.RTPPacket, []media.RTPPacket) {
	t.Helper()
	d, err := dtmf.New(dtmf.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var digits strings.Builder
	var events, all []media.RTPPacket
	at := time.Unix(0, 0)
	for _, g := range got {
		p := parsed(t, g.b)
		p.Payload = append([]byte(nil), p.Payload...)
		all = append(all, p)
		if p.PayloadType != eventPT {
			continue
		}
		events = append(events, p)
		out, err := d.Packet(nil, p.SequenceNumber, p.Timestamp, p.Marker, p.Payload, at)
		if err != nil {
			t.Fatal(err)
		}
		for _, press := range out {
			if want != 0 && press.Duration != want {
				t.Errorf("press %c lasted %v, want %v", press.Digit, press.Duration, want)
			}
			digits.WriteByte(press.Digit)
		}
		at = at.Add(20 * time.Millisecond)
	}
	return digits.String(), events, all
}

// TestSessionSendDTMF: the digits go out as telephone-events in place of
// audio, read back by our own detector as the same digits; the stream's
// sequence numbers run on without a gap, the event packets carry their
// event's start timestamp, the end bit on three per digit, and the bot's
// audio queued meanwhile goes out in the gaps between digits.
func TestSessionSendDTMF(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{OutputRate: 16000})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		if !r.s.CanSendEvents() {
			t.Fatal("telephone-event negotiated, CanSendEvents false")
		}
		time.Sleep(60 * time.Millisecond)
		for i := range 5 {
			if err := r.s.WriteFrame(&messages.OutputAudio{Rate: 16000, PCM: tone(1000, 16000, i*320, 320, 8000)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.s.SendDTMF(context.Background(), "1#9", dtmf.SendConfig{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		digits, events, all := readBack(t, r.peer.drain(), 101, 100*time.Millisecond)
		if digits != "1#9" {
			t.Fatalf("read back %q, want 1#9", digits)
		}
		if len(events) != 3*7 {
			t.Fatalf("%d event packets, want 21 (7 per digit)", len(events))
		}
		ends := 0
		for i, p := range events {
			first := i%7 == 0
			if p.Marker != first || (!first && p.Timestamp != events[i-1].Timestamp) {
				t.Fatalf("event packet %d: marker %v ts %d", i, p.Marker, p.Timestamp)
			}
			if p.Payload[1]&0x80 != 0 {
				ends++
			}
			if p.SSRC != r.s.SSRC() {
				t.Fatalf("event packet %d has another SSRC", i)
			}
		}
		if ends != 9 {
			t.Fatalf("%d end packets, want 3 per digit", ends)
		}
		toneAfter := 0
		for i, p := range all {
			if i > 0 && p.SequenceNumber != all[i-1].SequenceNumber+1 {
				t.Fatalf("sequence %d after %d", p.SequenceNumber, all[i-1].SequenceNumber)
			}
			if p.PayloadType == 0 {
				pcm := make([]int16, len(p.Payload))
				media.MulawDecode(pcm, p.Payload)
				if rms(pcm) > 3000 {
					toneAfter++
				}
			}
		}
		if toneAfter != 5 {
			t.Fatalf("%d audio packets after the events, want the 5 frames (held while an event plays, sent in the gaps)", toneAfter)
		}
		if st := r.s.Stats(); st.EventsSent != 21 || st.DigitsSent != 3 || st.DTMFSends != 1 {
			t.Fatalf("stats events %d digits %d sends %d", st.EventsSent, st.DigitsSent, st.DTMFSends)
		}
		r.close()
	})
}

// TestSessionSendDTMFCancel: a ctx ended mid-digit still sends that
// digit's three end packets, so the far end hears one press and no held
// key; the next digits are not sent. Mutation caught: returning at once
// on ctx without Stop leaves the schedule running (all digits heard).
func TestSessionSendDTMFCancel(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := r.s.SendDTMF(ctx, "123", dtmf.SendConfig{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
		time.Sleep(300 * time.Millisecond)
		// The length reached depends on whether the clock's first tick came
		// before the send: not pinned (0).
		_, events, _ := readBack(t, r.peer.drain(), 101, 0)
		d, _ := dtmf.New(dtmf.Config{})
		var presses []messages.DTMF
		ends := 0
		for _, p := range events {
			presses, _ = d.Packet(presses, p.SequenceNumber, p.Timestamp, p.Marker, p.Payload, time.Time{})
			if p.Payload[1]&0x80 != 0 {
				ends++
			}
		}
		if len(presses) != 1 || presses[0].Digit != '1' || ends != 3 {
			t.Fatalf("presses %+v, %d end packets; want one press of 1 closed by 3", presses, ends)
		}
		r.close()
	})
}

func TestSessionSendDTMFRefused(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{})
		if err := r.s.SendDTMF(context.Background(), "1", dtmf.SendConfig{}); !errors.Is(err, ErrState) {
			t.Fatalf("before start: %v", err)
		}
		p := pcmuParams()
		p.Events = false
		if err := r.s.Start(p); err != nil {
			t.Fatal(err)
		}
		if r.s.CanSendEvents() {
			t.Fatal("CanSendEvents without telephone-event")
		}
		if err := r.s.SendDTMF(context.Background(), "1", dtmf.SendConfig{}); !errors.Is(err, ErrNoTelephoneEvent) {
			t.Fatalf("no telephone-event: %v", err)
		}
		p.Events = true
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		if err := r.s.SendDTMF(context.Background(), "1x", dtmf.SendConfig{}); !errors.Is(err, dtmf.ErrInvalidDigits) {
			t.Fatalf("bad digits: %v", err)
		}
		p.Direction = RecvOnly
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		if err := r.s.SendDTMF(context.Background(), "1", dtmf.SendConfig{}); !errors.Is(err, ErrState) {
			t.Fatalf("on hold: %v", err)
		}
		r.close()
	})
}

// TestLoopbackSendDTMF: on real loopback sockets, the digits we send are
// read back by our own detector as the same digits, one press each.
func TestLoopbackSendDTMF(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets in real time")
	}
	base := leaktest.Snapshot()
	lo, hi := testRange(t, 40, 4)
	ports, err := NewPorts(PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: lo, Max: hi})
	if err != nil {
		t.Fatal(err)
	}
	far := listenLo(t)
	defer far.Close()
	s, err := New(Config{Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	p := pcmuParams()
	p.RemoteRTP = addrOf(far)
	if err := s.Start(p); err != nil {
		t.Fatal(err)
	}
	got := make(chan []dgram, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var out []dgram
		buf := make([]byte, 1500)
		for {
			_ = far.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			n, err := far.Read(buf)
			if err != nil {
				got <- out
				return
			}
			out = append(out, dgram{b: append([]byte(nil), buf[:n]...)})
		}
	}()
	if err := s.SendDTMF(context.Background(), "*0#", dtmf.SendConfig{}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	all := <-got
	wg.Wait()
	digits, events, _ := readBack(t, all, 101, 100*time.Millisecond)
	if digits != "*0#" || len(events) != 21 {
		t.Fatalf("read back %q from %d event packets, want *0# from 21", digits, len(events))
	}
	// Settle, not one snapshot: the reader above is still returning
	// after its Done (CI counted it once: "1 goroutines left").
	if n, stacks := leaktest.Settle(base, 5*time.Second); n != 0 {
		t.Fatalf("%d goroutines left\n%s", n, stacks)
	}
}
