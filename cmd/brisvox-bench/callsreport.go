package main

import (
	"math"
	"slices"
)

// The result types of `brisvox-bench calls`: one callsRun per count of
// concurrent calls, a callsSweep over several. The calls command fills
// them; the HTML report (callshtml.go) draws them. Durations are in
// milliseconds, shares of a core in percent of one core, so the JSON reads
// without units.

// callsSweep is the result of `brisvox-bench calls --sweep`: the runs in
// order of N and the verdict.
type callsSweep struct {
	// Date is when the sweep ran (RFC 3339, UTC); Machine says where
	// (cores, GOMAXPROCS, CPU model, Go version).
	Date    string     `json:"date"`
	Machine callsHost  `json:"machine"`
	Goals   callsGoals `json:"goals"`
	Runs    []callsRun `json:"runs"`
	// Largest is the largest N of Runs that met every goal (0: none).
	Largest int `json:"largest_n_meeting_goals"`
	// Command is the command line that produced the sweep.
	Command string `json:"command"`
}

// callsHost describes the machine of a run.
type callsHost struct {
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPU        string `json:"cpu"`
	Go         string `json:"go"`
}

// callsGoals are the thresholds a run is judged by.
type callsGoals struct {
	EngineAddedP99MS float64 `json:"engine_added_p99_ms"`
	BargeInP99MS     float64 `json:"barge_in_to_silence_p99_ms"`
	JitterP99MS      float64 `json:"jitter_p99_ms"`
	HeapPerCallKiB   float64 `json:"heap_per_call_kib"`
}

// callsRun is one run at N concurrent calls.
type callsRun struct {
	N     int     `json:"calls"`
	HoldS float64 `json:"hold_s"`
	// Turns counts the callers' turns that should have been answered;
	// Answered those that were; Lost = Turns - Answered (a turn with no
	// first audio, or a barge-in that never silenced the bot).
	Turns    int `json:"turns"`
	Answered int `json:"answered"`
	Lost     int `json:"lost_turns"`
	BargeIns int `json:"barge_ins"`
	ToolTurn int `json:"tool_turns"`
	// EngineAdded is the per-turn engine-added latency: first audio at
	// the caller minus the VAD's decision minus the turn policy's delays
	// minus the providers' scripted latencies.
	EngineAdded callsDist `json:"engine_added_ms"`
	// FirstAudio is the whole end of speech to first audio at the caller,
	// for reference.
	FirstAudio callsDist `json:"first_audio_ms"`
	// BargeIn is the caller's speech start (the VAD's decision) to the
	// last bot audio received at the caller.
	BargeIn callsDist `json:"barge_in_to_silence_ms"`
	// Jitter is |arrival gap - 20 ms| of the bot's frames within a spurt,
	// from kernel receive timestamps.
	Jitter callsDist `json:"jitter_ms"`
	// CPU is the server process's user+system time over the hold.
	CPUTotalPct   float64 `json:"cpu_total_pct_of_core"`
	CPUPerCallPct float64 `json:"cpu_per_call_pct_of_core"`
	CallersCPUPct float64 `json:"callers_cpu_pct_of_core"`
	RSSMB         float64 `json:"rss_mb"`
	RSSPerCallKiB float64 `json:"rss_per_call_kib"`
	// HeapPerCallKiB is (live heap at the hold - live heap before the
	// calls) / N.
	HeapPerCallKiB    float64 `json:"heap_per_call_kib"`
	GCPauseP99MS      float64 `json:"gc_pause_p99_ms"`
	SchedLatencyP99MS float64 `json:"sched_latency_p99_ms"`
	GoroutinesPerCall float64 `json:"goroutines_per_call"`
	// Met says whether the run met every goal; Why lists the ones it
	// missed.
	Met bool     `json:"met_goals"`
	Why []string `json:"missed,omitempty"`
}

// callsDist is a distribution: its count, quantiles and, for the CDF
// charts, up to 200 evenly spaced quantiles (Points[i] is the
// i/(len-1) quantile).
type callsDist struct {
	Count  int       `json:"count"`
	P50    float64   `json:"p50"`
	P90    float64   `json:"p90"`
	P99    float64   `json:"p99"`
	Max    float64   `json:"max"`
	Points []float64 `json:"cdf,omitempty"`
}

// cdfPoints is how many quantiles a callsDist keeps for its chart.
const cdfPoints = 200

// newCallsDist summarizes samples (it sorts them in place). Quantiles are
// nearest-rank; an empty sample gives the zero distribution.
func newCallsDist(samples []float64) callsDist {
	if len(samples) == 0 {
		return callsDist{}
	}
	slices.Sort(samples)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(samples)))) - 1
		return samples[max(0, min(i, len(samples)-1))]
	}
	d := callsDist{Count: len(samples), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: samples[len(samples)-1]}
	n := min(cdfPoints, len(samples))
	if n == 1 {
		d.Points = []float64{samples[0]}
		return d
	}
	d.Points = make([]float64, n)
	for i := range n {
		d.Points[i] = samples[(len(samples)-1)*i/(n-1)]
	}
	return d
}
