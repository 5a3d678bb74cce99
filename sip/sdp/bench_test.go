package sdp

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkAnswer answers real offers, as each INVITE and re-INVITE does.
func BenchmarkAnswer(b *testing.B) {
	for _, bc := range []struct{ name, offer string }{
		{"sipp_pcap", offerSippPcap},
		{"baresip", offerBaresip},
		{"asterisk", offerAsterisk},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newSession(b, Config{}, local4)
			body := []byte(bc.offer)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, _, err := s.Answer(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOffer writes our offer, as a late-offer 200 does.
func BenchmarkOffer(b *testing.B) {
	s := newSession(b, Config{}, local4)
	b.ReportAllocs()
	for b.Loop() {
		s.Offer()
		s.CancelOffer()
	}
}

// hostileOffer fills the size bound with the most work per byte: every
// m-line an audio one with the most formats, none of them ours, and the
// rest rtpmap lines each format lookup must scan.
func hostileOffer() string {
	lines := []string{"v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "t=0 0"}
	formats := make([]string, DefaultMaxFormats)
	for i := range formats {
		formats[i] = strconv.Itoa(96 + i)
	}
	for range DefaultMaxMedia {
		lines = append(lines, "m=audio 5000 RTP/AVP "+strings.Join(formats, " "))
		for i := range 40 {
			lines = append(lines, "a=rtpmap:"+strconv.Itoa(96+i%32)+" X/8000")
		}
	}
	s := sdpText(lines...)
	if len(s) > DefaultMaxSize {
		panic("hostile offer over the bound")
	}
	return s
}

// BenchmarkAnswerHostile: the worst an offer within the bounds costs.
func BenchmarkAnswerHostile(b *testing.B) {
	s := newSession(b, Config{}, local4)
	body := []byte(hostileOffer())
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, _, err := s.Answer(body); !errors.Is(err, ErrNoCommonCodec) {
			b.Fatal(err)
		}
	}
}
