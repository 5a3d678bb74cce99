package pocketsphinx

// preroll is the latest audio a session kept while it held no decoder: the
// VAD decides that speech started a little after it did, so the decoder
// is given this much from before the start. A fixed ring, written over
// when full; it allocates nothing after newPreroll. Only the worker uses
// it.
type preroll struct {
	ring []int16
	head int // index of the oldest sample kept
	n    int // samples kept
}

func newPreroll(samples int) *preroll { return &preroll{ring: make([]int16, samples)} }

// write keeps pcm, dropping the oldest samples beyond the ring's size.
func (r *preroll) write(pcm []int16) {
	size := len(r.ring)
	if size == 0 {
		return
	}
	if len(pcm) >= size {
		copy(r.ring, pcm[len(pcm)-size:])
		r.head, r.n = 0, size
		return
	}
	tail := (r.head + r.n) % size
	k := copy(r.ring[tail:], pcm)
	copy(r.ring, pcm[k:])
	if over := r.n + len(pcm) - size; over > 0 {
		r.head = (r.head + over) % size
		r.n = size
	} else {
		r.n += len(pcm)
	}
}

// drain hands the kept samples to f, oldest first, in pieces of at most
// step samples, and empties the ring. It stops at f's first error.
func (r *preroll) drain(step int, f func([]int16) error) error {
	for r.n > 0 {
		k := min(r.n, step, len(r.ring)-r.head)
		if err := f(r.ring[r.head : r.head+k]); err != nil {
			r.reset()
			return err
		}
		r.head = (r.head + k) % len(r.ring)
		r.n -= k
	}
	r.head = 0
	return nil
}

// reset forgets the kept samples.
func (r *preroll) reset() { r.head, r.n = 0, 0 }
