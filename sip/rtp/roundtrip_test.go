package rtp

import (
	"context"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// zeroCrossingHz estimates the frequency of a tone from its zero crossings.
func zeroCrossingHz(pcm []int16, rate int) float64 {
	n := 0
	for i := 1; i < len(pcm); i++ {
		if (pcm[i-1] < 0) != (pcm[i] < 0) {
			n++
		}
	}
	return float64(n) / 2 / (float64(len(pcm)) / float64(rate))
}

// TestRoundTrip: two sessions call each other over the in-memory network
// in each codec: a 16 kHz tone written to one comes out of the other at
// its frequency and level, through encode, packetise, latch, jitter
// buffer, decode and both resamplers.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		codec Codec
		pt    uint8
		hz    float64 // below the line's band edge
		ptime time.Duration
	}{
		{CodecPCMU, 0, 1000, 20 * time.Millisecond},
		{CodecPCMA, 8, 1000, 30 * time.Millisecond},
		{CodecG722, 9, 5000, 20 * time.Millisecond}, // wideband: above G.711's band
		{CodecOpus, 111, 5000, 20 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(string(tc.codec), func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				n := newMemNet()
				mk := func(local, remote netip.AddrPort, seed uint64) *Session {
					cfg := Config{Ports: &Ports{addr: local.Addr()}, RTCPMux: true}
					s, err := newSession(cfg.withDefaults(), n.listen(local.String()), nil, local, func() {}, WithRand(newSeeded(seed)))
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = s.Close() })
					p := Params{Codec: tc.codec, PayloadType: tc.pt, RemoteRTP: remote, RTCPMux: true, PtimeIn: tc.ptime, PtimeOut: tc.ptime}
					if err := s.Start(p); err != nil {
						t.Fatal(err)
					}
					return s
				}
				a := mk(ourRTP, peerRTP, 1)
				b := mk(peerRTP, ourRTP, 2)
				wrote := make(chan struct{})
				go func() {
					defer close(wrote)
					for i := range 150 {
						_ = a.WriteFrame(&messages.OutputAudio{Rate: 16000, PCM: tone(tc.hz, 16000, i*320, 320, 8000)})
						time.Sleep(messages.FrameDuration)
					}
				}()
				var got []int16
				for range 150 {
					var f messages.AudioFrame
					if err := b.ReadFrame(context.Background(), &f); err != nil {
						t.Fatal(err)
					}
					got = append(got, f.PCM...)
				}
				// The middle second: past the latch, the prebuffer, the
				// jitter delay and the filters' ramps.
				mid := got[len(got)/2-8000 : len(got)/2+8000]
				level, hz := rms(mid), zeroCrossingHz(mid, 16000)
				wantRMS := 8000 / math.Sqrt2
				if level < 0.7*wantRMS || level > 1.3*wantRMS || math.Abs(hz-tc.hz) > 0.05*tc.hz {
					t.Fatalf("received rms %.0f at %.0f Hz, sent %.0f at %.0f Hz", level, hz, wantRMS, tc.hz)
				}
				st := b.Stats()
				if st.DecodeErrors != 0 || st.Jitter.Lost != 0 || !st.Latched || st.Codec != tc.codec {
					t.Fatalf("stats %+v", st)
				}
				<-wrote
				_ = a.Close()
				_ = b.Close()
			})
		})
	}
}
