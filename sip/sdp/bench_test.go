package sdp

import "testing"

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
