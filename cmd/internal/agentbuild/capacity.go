package agentbuild

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brisvox/brisvox/providers"
)

// BoundMaxCalls is Capacity.Bound when the call limit is the smallest.
const BoundMaxCalls = "max calls"

// Capacity is how many calls an agent serves at once: the smallest of the
// call limit and what each scarce resource of its providers allows.
type Capacity struct {
	// Calls is the smallest of the call limit and every limit's Calls().
	Calls int
	// Limits are the providers' limits, in stage order (stt by rate, llm,
	// tts). An stt limit is named with its rate when the agent has an stt
	// for more than one rate (each rate has its own).
	Limits []providers.Limit
	// Bound names what gives Calls: a limit's Name, or BoundMaxCalls (also
	// when a limit allows as many calls as the call limit).
	Bound string
	// maxCalls is the call limit Capacity was given.
	maxCalls int
}

// Capacity is the agent's capacity under the call limit maxCalls (> 0):
// every provider that reports its scarce resources (providers.Limited)
// bounds it. A limit of one rate's stt bounds every call: the calls may
// all come at that rate.
//
// The Silero VAD pool is not a limit: its workers are shared per 32 ms
// window (a call holds none between its windows, and a full queue refuses
// a window, not a call), so it bounds the work per second, which the load
// figures of docs/LATENCY.md measure, not the number of calls.
func (a *Agent) Capacity(maxCalls int) Capacity {
	c := Capacity{Calls: maxCalls, Bound: BoundMaxCalls, maxCalls: maxCalls}
	add := func(p any, suffix string) {
		l, ok := p.(providers.Limited)
		if !ok {
			return
		}
		for _, lim := range l.Limits() {
			lim.Name += suffix
			c.Limits = append(c.Limits, lim)
			if n := lim.Calls(); n < c.Calls {
				c.Calls, c.Bound = n, lim.Name
			}
		}
	}
	rates := make([]int, 0, len(a.stt))
	for r := range a.stt {
		rates = append(rates, r)
	}
	slices.Sort(rates)
	for _, r := range rates {
		suffix := ""
		if len(rates) > 1 {
			suffix = " at " + strconv.Itoa(r) + " Hz"
		}
		add(a.stt[r], suffix)
	}
	add(a.llm, "")
	add(a.tts, "")
	return c
}

// String is the one line check and serve print: "capacity 4 calls
// (pocketsphinx decoders: 2, shared by 2 calls each; max calls 20)".
func (c Capacity) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "capacity %s (", calls(c.Calls))
	for _, l := range c.Limits {
		fmt.Fprintf(&b, "%s: %d, ", l.Name, l.Size)
		if l.PerCall || l.CallsPerUnit < 1 {
			b.WriteString("one per call; ")
		} else {
			fmt.Fprintf(&b, "shared by %s each; ", calls(l.CallsPerUnit))
		}
	}
	fmt.Fprintf(&b, "%s %d)", BoundMaxCalls, c.maxCalls)
	return b.String()
}

// calls is "1 call", "2 calls".
func calls(n int) string {
	if n == 1 {
		return "1 call"
	}
	return strconv.Itoa(n) + " calls"
}
