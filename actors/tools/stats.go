package tools

import "github.com/brisvox/brisvox/messages"

// Stats is the contract's ToolStatsSnapshot: the tools stage's counters
// over the call (they survive restarts of the stage), typed. The same
// numbers are in the stage's Describe counters under the snake_case
// names.
type Stats struct {
	// ReadOnlyCancelled: ReadOnly calls cut by a barge-in or a newer turn.
	ReadOnlyCancelled uint64
	// NotStartedCancelled: calls whose turn was cancelled before they
	// started (answered not_started).
	NotStartedCancelled uint64
	// SideEffectInterrupted: SideEffect calls still running when their
	// round was cut; each comes back as a late result.
	SideEffectInterrupted uint64
	// SideEffectLateResults: SideEffect results reported as late notes.
	SideEffectLateResults uint64
	// SideEffectReplays: calls answered from the idempotency store.
	SideEffectReplays uint64
	// SideEffectRepeats: identical SideEffect calls of a later response of
	// the same turn, refused already_done.
	SideEffectRepeats uint64
	// OrphanReplays, OrphanInFlight, OrphanLost, OrphanReported: the
	// orphan table's answers to a regenerated call.
	OrphanReplays, OrphanInFlight, OrphanLost, OrphanReported uint64
	// Held: calls held by the confirmation gate; SpeculationHeld: calls
	// held by a speculative round.
	Held, SpeculationHeld uint64
}

// StatsFrom reads the tools stage's Stats from its Describe answer.
func StatsFrom(d *messages.Description) Stats {
	c := d.Counters
	return Stats{
		ReadOnlyCancelled:     c["read_only_cancelled"],
		NotStartedCancelled:   c["not_started_cancelled"],
		SideEffectInterrupted: c["side_effect_interrupted"],
		SideEffectLateResults: c["side_effect_late_results"],
		SideEffectReplays:     c["side_effect_replays"],
		SideEffectRepeats:     c["side_effect_repeats"],
		OrphanReplays:         c["orphan_replays"],
		OrphanInFlight:        c["orphan_in_flight"],
		OrphanLost:            c["orphan_lost"],
		OrphanReported:        c["orphan_reported"],
		Held:                  c["held"],
		SpeculationHeld:       c["speculation_held"],
	}
}
