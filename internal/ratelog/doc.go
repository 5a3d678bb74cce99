// Package ratelog writes repeated events, such as refusals of callers
// under a flood, as a few log lines instead of one line each.
//
// A Tally counts events by cause. The first event after a quiet spell is
// written at once, so a single refusal is visible in the log as it
// happens; the events that follow within an interval are summed and
// written as one summary line when the interval ends, with the counts by
// cause:
//
//	{"level":"warn","counts":{"full":187,"draining":3},"interval":"1s","message":"gate: requests refused"}
//
// An interval in which nothing happened writes nothing and ends the
// spell: the next event is again written at once. So a steady flood
// writes one line per interval and any interval holds at most two.
//
// Add never blocks on the log's writer and does not allocate once its
// cause has been seen: it takes a mutex for an increment, and every line
// is written by the tally's timer (a time.AfterFunc, so no goroutine runs
// between lines). Close writes what is pending, stops the timer and
// waits for a line being written.
//
// A tally counts at most MaxCauses distinct causes; any other cause is
// counted as OtherCause, so a caller that passes unbounded strings
// cannot grow it. Causes are written as given: they must not hold what
// may not be logged (addresses, numbers, keys).
package ratelog
