package llm

import "github.com/brisvox/brisvox/messages"

// Stats is the contract's LlmStats: the llm stage's counters over the
// call (they survive restarts of the stage), typed. The same numbers are
// in the stage's Describe counters under the snake_case names.
type Stats struct {
	// Requests: provider requests (every round of every tool loop).
	Requests uint64
	// Fillers: filler phrases spoken; FillerClips: those that had a
	// pre-rendered clip.
	Fillers, FillerClips uint64
	// FillersInContext: spoken fillers placed in the context (after their
	// round's results; a barge-in may cut them there to their heard words).
	FillersInContext uint64
	// InterruptedToolCalls: open calls answered interrupted when their
	// round was cut.
	InterruptedToolCalls uint64
	// LateNotes: late SideEffect results added to the context as notes.
	LateNotes uint64
	// RoundFailures: rounds that failed (the fallback line was spoken).
	RoundFailures uint64
	// Speculations, SpeculationsCommitted, SpeculationsDiscarded: the
	// speculative turns started, committed and taken back.
	Speculations, SpeculationsCommitted, SpeculationsDiscarded uint64
	// WindowedRequests: requests cut to their window (Config.Window);
	// WindowDroppedMessages: history messages they left out;
	// WindowCompactedResults: tool results of a long tool loop they
	// compacted; RequestsOverWindow: requests still over the bound with
	// nothing left to cut (the prompt and the latest round alone).
	WindowedRequests, WindowDroppedMessages, WindowCompactedResults, RequestsOverWindow uint64
}

// StatsFrom reads the llm stage's Stats from its Describe answer.
func StatsFrom(d *messages.Description) Stats {
	c := d.Counters
	return Stats{
		Requests:               c["requests"],
		Fillers:                c["fillers"],
		FillerClips:            c["filler_clips"],
		FillersInContext:       c["fillers_in_context"],
		InterruptedToolCalls:   c["interrupted_tool_calls"],
		LateNotes:              c["late_notes"],
		RoundFailures:          c["round_failures"],
		Speculations:           c["speculations"],
		SpeculationsCommitted:  c["speculations_committed"],
		SpeculationsDiscarded:  c["speculations_discarded"],
		WindowedRequests:       c["windowed_requests"],
		WindowDroppedMessages:  c["window_dropped_messages"],
		WindowCompactedResults: c["window_compacted_results"],
		RequestsOverWindow:     c["requests_over_window"],
	}
}
