package contracttest

import (
	"errors"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// judgeTimeout demands that err is a *providers.Timeout that came elapsed
// after the stall began, within slack of the io timeout either way: a
// deadline that is too long, too short or not enforced at all fails.
func judgeTimeout(err error, elapsed, io, slack time.Duration) error {
	var to *providers.Timeout
	switch {
	case err == nil:
		return fmt.Errorf("no error after %v, want *providers.Timeout", elapsed)
	case !errors.As(err, &to):
		return fmt.Errorf("got %v after %v, want *providers.Timeout", err, elapsed)
	case elapsed > io+slack:
		return fmt.Errorf("a Timeout after %v, later than the deadline %v + %v", elapsed, io, slack)
	case elapsed < io-slack:
		return fmt.Errorf("a Timeout after %v, earlier than the deadline %v - %v", elapsed, io, slack)
	}
	return nil
}

// recvWithin receives from ch for at most d: ok is false when ch closed,
// timedOut true when nothing came within d. Receiving needs no goroutine,
// so a provider whose channel never delivers cannot hang the suite.
func recvWithin[E any](ch <-chan E, d time.Duration) (ev E, ok, timedOut bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case ev, ok = <-ch:
		return ev, ok, false
	case <-t.C:
		return ev, false, true
	}
}

// speechFrame is duration of PCM16 mono at rate: a 250 Hz square wave at
// amplitude 8000, far above any speech threshold.
func speechFrame(rate int, d time.Duration) []int16 {
	pcm := make([]int16, int64(rate)*int64(d)/int64(time.Second))
	half := max(rate/500, 1)
	for i := range pcm {
		if (i/half)%2 == 0 {
			pcm[i] = 8000
		} else {
			pcm[i] = -8000
		}
	}
	return pcm
}
