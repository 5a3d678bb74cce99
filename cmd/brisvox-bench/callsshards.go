package main

import (
	"encoding/binary"
	"slices"
	"sync"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// callerShards are the callers' send loops: shards of at most 16 callers
// share a 20 ms tick, the shards' ticks spread over the 20 ms so frames
// reach the server evenly. Used by calls-callers and calls-soak-callers.
type callerShards struct {
	sh   []*callerShard
	stop chan struct{}
	wg   sync.WaitGroup
}

// callerShard is one send loop's callers.
type callerShard struct {
	mu      sync.Mutex
	callers []*convCaller
	start   time.Time
}

// startCallerShards starts the loops for up to calls callers; at each of
// its ticks a shard calls tick with itself, a snapshot of its callers and
// the time.
func startCallerShards(calls int, tick func(s *callerShard, cs []*convCaller, now time.Time)) *callerShards {
	n := (calls + 15) / 16
	c := &callerShards{sh: make([]*callerShard, n), stop: make(chan struct{})}
	t0 := time.Now().Add(50 * time.Millisecond)
	for i := range c.sh {
		s := &callerShard{start: t0.Add(time.Duration(i) * messages.FrameDuration / time.Duration(n))}
		c.sh[i] = s
		c.wg.Go(func() {
			for k := 1; ; k++ {
				select {
				case <-c.stop:
					return
				case <-time.After(time.Until(s.start.Add(time.Duration(k) * messages.FrameDuration))):
				}
				s.mu.Lock()
				cs := s.callers
				s.mu.Unlock()
				tick(s, cs, time.Now())
			}
		})
	}
	return c
}

// add gives caller i its shard: its frame 0 goes with the shard's next
// tick, its capture started 20 ms before.
func (c *callerShards) add(i int, cl *convCaller) {
	s := c.sh[i%len(c.sh)]
	s.mu.Lock()
	cl.base = shardBase(s.start, time.Now())
	s.callers = append(s.callers[:len(s.callers):len(s.callers)], cl)
	s.mu.Unlock()
}

// remove takes done off the shard.
func (s *callerShard) remove(done []*convCaller) {
	s.mu.Lock()
	kept := make([]*convCaller, 0, len(s.callers))
	for _, c := range s.callers {
		if !slices.Contains(done, c) {
			kept = append(kept, c)
		}
	}
	s.callers = kept
	s.mu.Unlock()
}

// each calls f with every caller still on a shard (the loops stopped).
func (c *callerShards) each(f func(*convCaller)) {
	for _, s := range c.sh {
		s.mu.Lock()
		cs := s.callers
		s.mu.Unlock()
		for _, cl := range cs {
			f(cl)
		}
	}
}

// stopAll stops the loops and waits for them.
func (c *callerShards) stopAll() {
	close(c.stop)
	c.wg.Wait()
}

// speechBytes is the fixture's utterances as s16le.
func speechBytes(fx callFixture) [][]byte {
	speech := make([][]byte, len(fx.PCM))
	for i, pcm := range fx.PCM {
		b := make([]byte, 2*len(pcm))
		for j, v := range pcm {
			binary.LittleEndian.PutUint16(b[2*j:], uint16(v))
		}
		speech[i] = b
	}
	return speech
}
