package rtp

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
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
