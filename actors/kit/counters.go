package kit

import (
	"sort"

	"github.com/brisvox/brisvox/messages"
)

// Counters are an actor's named event counts, reported by Describe. The
// names are fixed per actor, so the map stops growing after the first
// events of a call.
type Counters map[string]uint64

// Inc adds one to name.
func (c Counters) Inc(name string) { c[name]++ }

// Add adds n to name.
func (c Counters) Add(name string, n uint64) { c[name] += n }

// Snapshot copies the counters for a Description.
func (c Counters) Snapshot() map[string]uint64 {
	out := make(map[string]uint64, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Names lists the counter names in order (for printing).
func Names(m map[string]uint64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Describe builds the answer of an actor to messages.Describe. The mailbox
// depth is filled in by the parent, which holds the mailbox (see MailboxRef).
func Describe(name, state string, c Counters) *messages.Description {
	return &messages.Description{Name: name, State: state, Counters: c.Snapshot()}
}
