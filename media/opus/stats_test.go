//go:build cgo

package opus

import (
	"sync"
	"testing"
)

// TestStatsReadWhileDecoding reads Stats from another goroutine while the
// stream decodes, as a metrics scraper does; run with -race.
// Mutation caught (under -race): the counters made plain integers.
func TestStatsReadWhileDecoding(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	packets := encodeAll(t, enc, sine(48000, 1000, 0.5, 960*20))
	dec, err := NewDecoder(DecoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				if st := dec.Stats(); st.Decoded > uint64(len(packets)) {
					t.Errorf("decoded %d of %d", st.Decoded, len(packets))
				}
			}
		}
	})
	pcm := make([]int16, 960)
	for _, p := range packets {
		if _, err := dec.Decode(p, pcm); err != nil {
			t.Error(err)
		}
	}
	close(done)
	wg.Wait()
	if got := dec.Stats().Decoded; got != uint64(len(packets)) {
		t.Fatalf("decoded %d, want %d", got, len(packets))
	}
}
