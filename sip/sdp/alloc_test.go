package sdp

import "testing"

// TestAllocs pins the allocations of an answer and an offer. Most of an
// answer's are pion/sdp's (the string copy, the description, its
// attributes); ours are the payload list, the m-lines, and the two output
// buffers.
// Mutation caught: one more allocation in the writer (fmt.Sprint for the
// o= line's id).
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, tc := range []struct {
		name   string
		offer  string
		budget float64
	}{
		{"sipp_pcap", offerSippPcap, 25},
		{"baresip", offerBaresip, 30},
		{"asterisk", offerAsterisk, 29},
	} {
		s := newSession(t, Config{}, local4)
		body := []byte(tc.offer)
		n := testing.AllocsPerRun(50, func() {
			if _, _, err := s.Answer(body); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("Answer %s: %v allocations", tc.name, n)
		if n > tc.budget {
			t.Errorf("Answer %s: %v allocations, budget %v", tc.name, n, tc.budget)
		}
	}
	s := newSession(t, Config{}, local4)
	if n := testing.AllocsPerRun(50, func() { s.Offer(); s.CancelOffer() }); n > 3 {
		t.Errorf("Offer: %v allocations, budget 3", n)
	}
}
