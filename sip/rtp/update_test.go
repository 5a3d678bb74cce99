package rtp

import (
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
	"github.com/pion/rtcp"
)

// TestSessionSymmetricRTP: behind NAT the caller's media comes from
// another address than its SDP says; with SymmetricRTP it latches and our
// audio goes back to it, without only to the signalled address.
func TestSessionSymmetricRTP(t *testing.T) {
	for _, symmetric := range []bool{false, true} {
		name := "strict"
		if symmetric {
			name = "symmetric"
		}
		t.Run(name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				r := newMemSession(t, Config{SymmetricRTP: symmetric})
				natted := r.net.listen(peerOther.String())
				if err := r.s.Start(pcmuParams()); err != nil {
					t.Fatal(err)
				}
				<-r.stream(peerOther, 3, 1, 20, 20*time.Millisecond, toneAt(20))
				st := r.s.Stats()
				toNAT, toSignalled := len(natted.drain()), len(r.peer.drain())
				if symmetric {
					// Mutation caught: symmetric sending ignored (our
					// audio keeps going to the signalled address).
					if !st.Latched || st.Source != peerOther || toNAT < 15 {
						t.Fatalf("latched %v on %v; %d packets to the NAT address, %d to the signalled", st.Latched, st.Source, toNAT, toSignalled)
					}
				} else if st.Latched || st.Drops["unsignalled_source"] != 20 || toNAT != 0 || toSignalled == 0 {
					t.Fatalf("latched %v; drops %v; %d to the NAT address", st.Latched, st.Drops, toNAT)
				}
				r.close()
			})
		})
	}
}

// TestSessionUpdateCodec: a re-INVITE to PCMA: our packets change payload
// type with the marker, and the caller's PCMA is decoded; PCMU from the
// old offer is now a foreign payload type.
func TestSessionUpdateCodec(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{InputRate: 8000})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		<-r.stream(peerRTP, 3, 1, 25, 20*time.Millisecond, toneAt(20))
		p := pcmuParams()
		p.Codec, p.PayloadType = CodecPCMA, 8
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		r.peer.drain()
		alaw := func(i int) (uint8, []byte) {
			b := make([]byte, 160)
			media.AlawEncode(b, tone(1000, 8000, i*160, 160, 8000))
			return 8, b
		}
		go func() {
			for range 100 {
				var f messages.AudioFrame
				_ = r.s.ReadFrame(t.Context(), &f)
			}
		}()
		<-r.stream(peerRTP, 3, 26, 50, 20*time.Millisecond, alaw)
		sent := r.peer.drain()
		if len(sent) < 40 {
			t.Fatalf("%d packets after the update", len(sent))
		}
		first := parsed(t, sent[0].b)
		if first.PayloadType != 8 || !first.Marker {
			t.Fatalf("first packet after the update: pt %d marker %v", first.PayloadType, first.Marker)
		}
		for _, d := range sent[1:] {
			if p := parsed(t, d.b); p.PayloadType != 8 || p.Marker {
				t.Fatalf("pt %d marker %v", p.PayloadType, p.Marker)
			}
		}
		st := r.s.Stats()
		if st.Codec != CodecPCMA || st.DecodeErrors != 0 || st.Jitter.Played < 30 || st.Drops["learning"] != 6 {
			t.Fatalf("codec %s, played %d, drops %v", st.Codec, st.Jitter.Played, st.Drops)
		}
		r.close()
	})
}

// TestSessionOutputQueueBound: WriteFrame never blocks; beyond the queue
// the oldest frames are dropped and counted, and the marks between them
// still echo in order.
func TestSessionOutputQueueBound(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{OutputQueue: 10})
		var echoed []string
		r.s.OnMarkEcho(func(name string) { echoed = append(echoed, name) })
		_ = r.s.Mark("first") // nothing queued: at once
		for i := range 30 {
			if err := r.s.WriteFrame(&messages.OutputAudio{Rate: 16000, PCM: make([]int16, 320)}); err != nil {
				t.Fatal(err)
			}
			if i == 4 {
				_ = r.s.Mark("behind-5")
			}
		}
		// The mark's five frames were dropped: it is at the head, due.
		if st := r.s.Stats(); st.OutputDropped != 20 || len(echoed) != 2 || echoed[1] != "behind-5" {
			t.Fatalf("dropped %d, echoes %v", st.OutputDropped, echoed)
		}
		if err := r.s.WriteFrame(&messages.OutputAudio{Rate: 8000, PCM: make([]int16, 160)}); err == nil {
			t.Fatal("a frame of the wrong rate was taken")
		}
		r.close()
	})
}

// TestSessionMarkBound: marks behind queued audio are bounded.
func TestSessionMarkBound(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{})
		if err := r.s.WriteFrame(&messages.OutputAudio{Rate: 16000, PCM: make([]int16, 320)}); err != nil {
			t.Fatal(err)
		}
		for i := range maxMarks {
			if err := r.s.Mark("m"); err != nil {
				t.Fatalf("mark %d: %v", i, err)
			}
		}
		if err := r.s.Mark("one too many"); !errors.Is(err, ErrQueueFull) {
			t.Fatalf("Mark = %v, want ErrQueueFull", err)
		}
		r.close()
	})
}

// TestSessionUpdateRefresh: a refresh with the same parameters keeps the
// latch and the stream; a changed one learns again. Mutation caught:
// every Update learning again (a session timer's refresh would drop the
// caller's next packets and open the latch).
func TestSessionUpdateRefresh(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{})
		p := pcmuParams()
		if err := r.s.Start(p); err != nil {
			t.Fatal(err)
		}
		<-r.stream(peerRTP, 3, 1, 10, 20*time.Millisecond, toneAt(20))
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		<-r.stream(peerRTP, 3, 11, 10, 20*time.Millisecond, toneAt(20))
		if st := r.s.Stats(); st.Drops["learning"] != 3 || st.PacketsIn != 17 || !st.Latched {
			t.Fatalf("after a refresh: learning drops %d, packets in %d", st.Drops["learning"], st.PacketsIn)
		}
		p.PtimeOut = 40 * time.Millisecond
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		if st := r.s.Stats(); st.Latched {
			t.Fatal("a new offer/answer kept the old lock")
		}
		r.close()
	})
}

// TestSessionReceiverReportOnHold: while we may not send, our reports are
// receiver reports (no sender info for a stream that is not flowing).
// Mutation caught: the SR chosen without looking at what was sent.
func TestSessionReceiverReportOnHold(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{})
		p := pcmuParams()
		p.Direction = RecvOnly
		if err := r.s.Start(p); err != nil {
			t.Fatal(err)
		}
		done := r.stream(peerRTP, 3, 1, 400, 20*time.Millisecond, toneAt(20))
		d, ok := r.peerRTCP.recv(t, 8*time.Second)
		if !ok {
			t.Fatal("no report")
		}
		pkts, err := rtcp.Unmarshal(d.b)
		if err != nil {
			t.Fatal(err)
		}
		if rr, ok := pkts[0].(*rtcp.ReceiverReport); !ok || len(rr.Reports) != 1 || rr.Reports[0].SSRC != 3 {
			t.Fatalf("first packet %#v, want an RR about the caller", pkts[0])
		}
		<-done
		r.close()
	})
}
