package rtp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/pion/rtcp"
)

// receiverReport is an RTCP RR of the peer (SSRC 0x77) with no blocks.
func receiverReport(t *testing.T) []byte {
	t.Helper()
	b, err := (&rtcp.ReceiverReport{SSRC: 0x77}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLivenessTimedOut: which signs of life count, direction by direction.
// Mutations caught (each seen failing): RTCP counted in a sendrecv call
// ("sendrecv rtcp only" kept alive); a held call judged by RTP alone
// ("held sendonly no rtp, rtcp flowing" cut); the held floor dropped
// ("held below the floor" cut at 10 s).
func TestLivenessTimedOut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name    string
		live    liveness
		now     time.Time
		timeout time.Duration
		want    bool
	}{
		{"sendrecv rtp flowing", liveness{lastRTP: at(95)}, at(100), 10 * time.Second, false},
		{"sendrecv rtp stopped", liveness{lastRTP: at(90)}, at(100), 10 * time.Second, true},
		{"sendrecv rtcp only", liveness{lastRTP: at(50), lastRTCP: at(99)}, at(100), 10 * time.Second, true},
		{"timeout off", liveness{lastRTP: at(0)}, at(100), -1, false},
		{"held inactive never any rtcp", liveness{lastRTP: at(0), dir: Inactive}, at(1000), 10 * time.Second, false},
		{"held sendonly no rtp, rtcp flowing", liveness{lastRTP: at(0), lastRTCP: at(97), dir: RecvOnly}, at(100), 10 * time.Second, false},
		{"held rtcp stopped", liveness{lastRTP: at(0), lastRTCP: at(60), dir: Inactive}, at(100), 30 * time.Second, true},
		{"held below the floor", liveness{lastRTP: at(0), lastRTCP: at(90), dir: SendOnly}, at(100), 5 * time.Second, false},
		{"held past the floor", liveness{lastRTP: at(0), lastRTCP: at(74), dir: SendOnly}, at(100), 5 * time.Second, true},
		{"held rtp counts too", liveness{lastRTP: at(95), lastRTCP: at(10), dir: RecvOnly}, at(100), 30 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, quiet := tt.live.timedOut(tt.now, tt.timeout); got != tt.want {
				t.Errorf("timedOut = %v (quiet %v), want %v", got, quiet, tt.want)
			}
		})
	}
}

// TestSessionHeldRTCPStops: the remote holds (inactive) and sends RTCP
// every 5 s: the call lives on for minutes without RTP; once its RTCP
// stops, the session ends after the held bound with ErrMediaTimeout, and
// ReadFrame says the caller vanished (conn.ErrVanished). Mutations
// caught (each seen failing): lastRTCP never set (no timeout: the call
// held for ever by a vanished peer); closedErr without ErrVanished
// (ReasonOf "hangup").
func TestSessionHeldRTCPStops(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{MediaTimeout: 10 * time.Second})
		p := pcmuParams()
		if err := r.s.Start(p); err != nil {
			t.Fatal(err)
		}
		p.Direction = Inactive
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		rr := receiverReport(t)
		for range 24 { // two minutes of reports
			r.net.sendFrom(peerRTCP, ourRTCP, rr)
			time.Sleep(5 * time.Second)
		}
		if err := r.s.Err(); err != nil {
			t.Fatalf("a held call with RTCP flowing ended: %v", err)
		}
		stopped := time.Now().Add(-5 * time.Second)
		select {
		case <-r.s.Done():
		case <-time.After(10 * time.Minute):
			_ = r.s.Close()
			t.Fatal("the held call outlived its RTCP by 10 minutes")
		}
		took := time.Since(stopped)
		if took < heldBound || took > heldBound+100*time.Millisecond {
			t.Fatalf("ended %v after the last RTCP, want %v", took, heldBound)
		}
		var f messages.AudioFrame
		err := r.s.ReadFrame(context.Background(), &f)
		if !errors.Is(err, conn.ErrClosed) || !errors.Is(err, conn.ErrVanished) || !errors.Is(err, ErrMediaTimeout) {
			t.Fatalf("ReadFrame = %v, want ErrClosed, ErrVanished and ErrMediaTimeout", err)
		}
		if got := conn.ReasonOf(err); got != conn.ReasonVanished {
			t.Fatalf("ReasonOf = %q", got)
		}
		r.close()
	})
}

// TestSessionCloseIsNotVanished: a session closed by its owner (the
// dialog's BYE) ends the call "hangup", not "vanished". Mutation caught
// (seen failing): closedErr wrapping ErrVanished whatever the cause.
func TestSessionCloseIsNotVanished(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{MediaTimeout: 10 * time.Second})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		_ = r.s.Close()
		var f messages.AudioFrame
		err := r.s.ReadFrame(context.Background(), &f)
		if !errors.Is(err, conn.ErrClosed) || errors.Is(err, conn.ErrVanished) {
			t.Fatalf("ReadFrame = %v, want ErrClosed without ErrVanished", err)
		}
		r.close()
	})
}
