package contracttest

import (
	"fmt"
	"github.com/brisvox/brisvox/internal/leaktest"
	"time"
)

// callBounded runs f on its own goroutine and waits at most bound for it.
// When f hangs it calls abort (which should make f return: cancel its
// context, close its stream), waits up to bound again, hands a late result
// to drop (to close it) and returns an ErrHang error naming the call. A
// panic in f is returned as an error. A call that ignores abort is left
// behind: nothing else can stop it.
func callBounded[T any](what string, bound time.Duration, f func() (T, error), abort func(), drop func(T)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res.err = fmt.Errorf("%s panicked: %v", what, p)
			}
			ch <- res
		}()
		res.v, res.err = f()
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case res := <-ch:
		return res.v, res.err
	case <-t.C:
	}
	if abort != nil {
		abort()
	}
	t.Reset(bound)
	var zero T
	select {
	case res := <-ch:
		if drop != nil && res.err == nil {
			drop(res.v)
		}
		return zero, fmt.Errorf("%w: %s after %v", ErrHang, what, bound)
	case <-t.C:
		return zero, fmt.Errorf("%w: %s after %v, and again %v after it was cancelled", ErrHang, what, bound, bound)
	}
}

// goroutinePoll is how often the leak check reads the goroutine count.
const goroutinePoll = 50 * time.Millisecond

// stableGoroutines waits until the set of goroutines has not changed for
// window (at most 10 x window) and returns it: goroutines of earlier checks
// still winding down are not taken as the baseline.
func stableGoroutines(window time.Duration) leaktest.Set {
	set, since, start := leaktest.Snapshot(), time.Now(), time.Now()
	for time.Since(start) < 10*window {
		time.Sleep(goroutinePoll)
		if now := leaktest.Snapshot(); len(now) != len(set) || now.NewSince(set) != 0 {
			set, since = now, time.Now()
			continue
		}
		if time.Since(since) >= window {
			break
		}
	}
	return set
}

// settleGoroutines waits up to bound for every goroutine started since
// baseline to end and returns how many are left. A goroutine of the
// baseline that ends meanwhile cannot hide a new one (a difference of
// counts could: the KeepAlive double passed the leak check now and then
// when an earlier check's generation ended inside the window).
//
// None left must be seen twice, a poll apart: a goroutine still running
// when the session ends (reading, allocating) can be missing from one
// snapshot, and in a synctest bubble the sleep between the two returns
// only once every goroutine of the bubble is blocked.
func settleGoroutines(baseline leaktest.Set, bound time.Duration) int {
	start := time.Now()
	clean := 0
	for {
		n := leaktest.Snapshot().NewSince(baseline)
		if n == 0 {
			clean++
		} else {
			clean = 0
		}
		if clean == 2 || (n > 0 && time.Since(start) >= bound) {
			return n
		}
		time.Sleep(goroutinePoll)
	}
}
