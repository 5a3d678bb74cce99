package rtp

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/pion/rtcp"
)

// TestSessionComfortNoise: CN packets (PT 13 and 19) between talk spurts
// are counted and played as silence, never decoded as speech, and cost no
// loss. Mutation caught: CN decoded as audio (its frames are not silent),
// or CN left out of the jitter buffer (its slots are concealed: the last
// speech frame repeats, fading, and Concealed counts them).
func TestSessionComfortNoise(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{InputRate: 8000})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		// 1 s of tone, 1 s of CN (one packet per 20 ms, as a gateway
		// without silence suppression's gaps sends it), 1 s of tone.
		cn := []byte{0x40} // a noise level that decodes loud as mu-law
		payload := func(i int) (uint8, []byte) {
			switch {
			case i >= 50 && i < 100 && i%2 == 0:
				return 13, cn
			case i >= 50 && i < 100:
				return 19, cn
			}
			return 0, tonePCMU(1000, i*160, 160)
		}
		done := r.stream(peerRTP, 5, 1, 150, 20*time.Millisecond, payload)
		frames := r.read(150)
		<-done
		// Where the CN stretch plays depends on the jitter delay: find the
		// silent run and check its length.
		silent, longest := 0, 0
		for _, f := range frames[10:] {
			if rms(f.PCM) == 0 {
				silent++
				longest = max(longest, silent)
			} else {
				silent = 0
			}
		}
		if longest < 48 || longest > 52 {
			t.Fatalf("longest silent run %d frames, want the 50 of CN", longest)
		}
		st := r.s.Stats()
		if st.CN != 50 || st.Jitter.Lost != 0 || st.Jitter.Concealed != 0 {
			t.Fatalf("cn %d, lost %d, concealed %d", st.CN, st.Jitter.Lost, st.Jitter.Concealed)
		}
		r.close()
	})
}

// TestSessionEvents: telephone-event packets of the latched source reach
// OnEvent with their fields; those of other sources and unknown payload
// types do not.
func TestSessionEvents(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		type ev struct {
			seq    uint16
			ts     uint32
			marker bool
			p      [4]byte
		}
		got := make(chan ev, 64)
		r := newMemSession(t, Config{OnEvent: func(seq uint16, ts uint32, marker bool, payload []byte, _ time.Time) {
			var e ev
			e.seq, e.ts, e.marker = seq, ts, marker
			copy(e.p[:], payload)
			got <- e
		}})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		payload := func(i int) (uint8, []byte) {
			switch {
			case i >= 10 && i < 13:
				return 101, []byte{5, 0x0a, 0, byte(160 * (i - 10))} // digit 5, no end
			case i == 13:
				return 101, []byte{5, 0x8a, 0x01, 0xe0} // end
			case i == 14:
				return 96, []byte{1, 2, 3} // not negotiated
			}
			return 0, tonePCMU(1000, i*160, 160)
		}
		done := r.stream(peerRTP, 5, 1, 20, 20*time.Millisecond, payload)
		<-done
		r.net.sendFrom(attacker, ourRTP, rtpPacket(101, 30, 0, 5, true, []byte{9, 0x80, 0, 0}))
		time.Sleep(10 * time.Millisecond)
		close(got)
		var evs []ev
		for e := range got {
			evs = append(evs, e)
		}
		if len(evs) != 4 || evs[0].p[0] != 5 || evs[0].seq != 11 || evs[3].p[1]&0x80 == 0 {
			t.Fatalf("events %+v, want the 4 packets of digit 5", evs)
		}
		st := r.s.Stats()
		if st.Events != 4 || st.Drops["payload_type"] != 1 || st.Drops["foreign_address"] != 1 || st.Jitter.Lost != 0 {
			t.Fatalf("events %d, drops %v, lost %d", st.Events, st.Drops, st.Jitter.Lost)
		}
		r.close()
	})
}

// TestSessionRTCPMux: with rtcp-mux, RTCP on the RTP port is recognised
// by its second byte and our reports go to the RTP address.
func TestSessionRTCPMux(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{RTCPMux: true})
		p := pcmuParams()
		p.RTCPMux = true
		if err := r.s.Start(p); err != nil {
			t.Fatal(err)
		}
		done := r.stream(peerRTP, 5, 1, 50, 20*time.Millisecond, toneAt(20))
		sr := &rtcp.SenderReport{SSRC: 5, NTPTime: ntpTime(time.Now()), Reports: []rtcp.ReceptionReport{{SSRC: r.s.SSRC(), FractionLost: 128}}}
		b, _ := sr.Marshal()
		time.Sleep(200 * time.Millisecond)
		r.net.sendFrom(peerRTP, ourRTP, b)
		<-done
		time.Sleep(8 * time.Second)
		st := r.s.Stats()
		if st.RTCP.ReportsIn != 1 || st.RTCP.RemoteFractionLost != 0.5 || st.Drops["malformed"] != 0 || st.Drops["payload_type"] != 0 {
			t.Fatalf("rtcp %+v, drops %v", st.RTCP, st.Drops)
		}
		reports := 0
		for _, d := range r.peer.drain() {
			if isRTCPType(d.b[1]) {
				reports++
			}
		}
		if reports == 0 || st.RTCP.ReportsOut == 0 {
			t.Fatalf("%d reports reached the rtp address", reports)
		}
		if err := r.s.Update(Params{Codec: CodecPCMU, RemoteRTP: peerRTP}); err == nil {
			t.Fatal("Update to rtcp on its own port accepted with only one port bound")
		}
		r.close()
	})
}

// TestSessionReadFrameAfterClose: ReadFrame, WriteFrame, Mark and Clear
// return conn.ErrClosed once closed; Start after Close fails.
func TestSessionReadFrameAfterClose(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{})
		r.close()
		var f messages.AudioFrame
		for name, err := range map[string]error{
			"ReadFrame":  r.s.ReadFrame(t.Context(), &f),
			"WriteFrame": r.s.WriteFrame(&messages.OutputAudio{PCM: make([]int16, 320)}),
			"Mark":       r.s.Mark("x"),
			"Clear":      r.s.Clear(1),
		} {
			if err == nil {
				t.Fatalf("%s after Close: nil", name)
			}
		}
		if err := r.s.Start(pcmuParams()); err == nil {
			t.Fatal("Start after Close")
		}
	})
}
