package pacer

import (
	"math"
	"sync"
	"testing"

	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/messages"
)

// TestResamplerTailIsFlushed: the polyphase filter holds back its delay's
// worth of audio; at the epoch's end it is pushed out, so the epoch's
// output covers the input's whole length plus the filter delay. Chunking
// does not change the total. (Mutation seen failing: flushResampler not
// feeding its output — the last 1.8 ms are lost.)
func TestResamplerTailIsFlushed(t *testing.T) {
	pool := &sync.Pool{}
	pool.New = func() any { return messages.NewPooledOutput(16000, func(f *messages.OutputAudio) { pool.Put(f) }) }
	a := &Actor{cfg: Config{Rate: 16000}, pool: pool, stats: kit.Counters{}}
	in := make([]int16, 24000*3/10+7) // 300 ms and a bit at 24 kHz, in odd chunks
	for i := range in {
		in[i] = int16(8000 * math.Sin(float64(i)*2*math.Pi*440/24000))
	}
	for len(in) > 0 {
		n := min(len(in), 333)
		a.resample(in[:n], 24000)
		in = in[n:]
	}
	a.flushResampler()
	total := int(a.queued/messages.FrameDuration)*320 + a.filled
	want := float64(24000*3/10+7)*16000/24000 + a.rs.rs.Delay()
	if float64(total) < want {
		t.Fatalf("%d samples out, want at least %.1f (input length plus the filter delay)", total, want)
	}
	if a.stats["resample_unsupported"] != 0 {
		t.Fatalf("counters %v", a.stats)
	}
}
