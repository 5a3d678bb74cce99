package leaktest

import (
	"bytes"
	"runtime"
	"strconv"
	"time"
)

// Settle is the leak check of a real-time test (outside a bubble, where
// synctest.Wait cannot tell when the goroutines that were told to stop
// have gone): it counts the goroutines started since base until none is
// left or within has passed, and returns how many are left with their
// stacks. A goroutine waited for through a sync.WaitGroup is still alive
// for a moment after its Done (its deferred calls return, then it exits),
// so a single snapshot right after Wait can count it: that is a race of
// the check, not a leak. A goroutine that never ends is still counted
// after within.
func Settle(base Set, within time.Duration) (left int, stacks string) {
	deadline := time.Now().Add(within)
	for {
		now := Snapshot()
		n := now.NewSince(base)
		if n == 0 {
			return 0, ""
		}
		if time.Now().After(deadline) {
			return n, stacksOf(now, base)
		}
		time.Sleep(5 * time.Millisecond) // polling for goroutines to exit, not a timing
	}
}

// stacksOf is the dump of the goroutines of now that are not in base.
func stacksOf(now, base Set) string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out bytes.Buffer
	for rest := buf; len(rest) > 0; {
		var block []byte
		block, rest, _ = bytes.Cut(rest, []byte("\n\n"))
		head, ok := bytes.CutPrefix(block, []byte("goroutine "))
		if !ok {
			continue
		}
		idText, _, _ := bytes.Cut(head, []byte(" "))
		id, err := strconv.ParseUint(string(idText), 10, 64)
		if err != nil {
			continue
		}
		if _, ok := now[id]; !ok {
			continue
		}
		if _, old := base[id]; old {
			continue
		}
		out.Write(block)
		out.WriteString("\n\n")
	}
	return out.String()
}
