package pacer

import "github.com/brisvox/brisvox/media"

// resampleBlock is how much provider audio one resampler call takes.
const resampleBlock = 960

// resampling converts provider audio to the call's rate with media's
// polyphase resampler (an 85 dB Kaiser-windowed sinc). It keeps its
// filter history across the chunks of an epoch, is reset at a new epoch,
// and its tail (the filter's delay, 1-3.5 ms) is flushed at the epoch's
// end. Its buffers are made once per provider rate, so a chunk costs no
// allocation.
type resampling struct {
	rs    *media.Resampler
	out   []int16
	zeros []int16
	used  bool // audio went through it in this epoch
}

// resample feeds pcm at rate from, converted to the call's rate. A rate
// the resampler does not support (media supports 8, 16, 24 and 48 kHz) is
// converted by linear interpolation and counted (resample_unsupported):
// audible aliasing rather than silence.
func (a *Actor) resample(pcm []int16, from int) {
	a.stats.Inc("resampled_chunks")
	if a.rs == nil || a.rs.rs.From() != from {
		rs, err := media.NewResampler(from, a.cfg.Rate, media.ResamplerConfig{})
		if err != nil {
			a.stats.Inc("resample_unsupported")
			a.feed(resampleLinear(pcm, from, a.cfg.Rate))
			return
		}
		a.rs = &resampling{rs: rs, out: make([]int16, rs.MaxOutLen(resampleBlock)), zeros: make([]int16, rs.TapsPerPhase())}
	}
	r := a.rs
	r.used = true
	for len(pcm) > 0 {
		n := min(len(pcm), resampleBlock)
		nOut, nIn := r.rs.Process(r.out, pcm[:n])
		a.feed(r.out[:nOut])
		if nIn == 0 {
			return // cannot happen with out sized by MaxOutLen; never spin
		}
		pcm = pcm[nIn:]
	}
}

// flushResampler pushes out the audio the filter still holds at the end
// of an epoch.
func (a *Actor) flushResampler() {
	if a.rs == nil || !a.rs.used {
		return
	}
	r := a.rs
	nOut, _ := r.rs.Process(r.out, r.zeros)
	a.feed(r.out[:nOut])
	r.used = false
}

func (a *Actor) resetResampler() {
	if a.rs != nil {
		a.rs.rs.Reset()
		a.rs.used = false
	}
}

// resampleLinear converts pcm between rates by linear interpolation: the
// fallback for rates the polyphase resampler does not support.
func resampleLinear(pcm []int16, from, to int) []int16 {
	if from <= 0 || len(pcm) == 0 {
		return nil
	}
	n := len(pcm) * to / from
	out := make([]int16, n)
	for i := range out {
		pos := float64(i) * float64(from) / float64(to)
		j := int(pos)
		frac := pos - float64(j)
		s0 := float64(pcm[j])
		s1 := s0
		if j+1 < len(pcm) {
			s1 = float64(pcm[j+1])
		}
		out[i] = int16(s0 + (s1-s0)*frac)
	}
	return out
}
