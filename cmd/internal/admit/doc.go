// Package admit decides whether the node takes one more call from what
// its calls measurably cost, not from a fixed count alone.
//
// A Meter is fed samples of the process's CPU time and its live call
// count (Sample, time and readings are arguments, so the decision is a
// pure function of them). From each interval it learns two figures,
// both smoothed (an exponentially weighted mean):
//
//   - the baseline: the cores the process uses with no call live (the
//     HTTP server, the actor system, the collector), learnt from
//     intervals without calls;
//   - the cost per call: the cores above the baseline, over the mean
//     live count of the interval, learnt from intervals with calls.
//
// Until MinSamples intervals with calls were seen, the cost per call is
// at least Prior: a node that just started has no figure of its own and
// would otherwise admit any burst on a cost of zero.
//
// Decide admits a call while the estimate of the load after it,
// (baseline + cost × (calls + 1)) / cores, stays at or under Ceiling.
// The call limit is the caller's (serve checks it first); a refusal here
// is conn.RefusedOverloaded.
//
// Sampler runs a Meter on the process's own CPU time (getrusage) on a
// ticker, in one goroutine its owner stops and waits for.
package admit
