package main

import (
	"encoding/json"
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
	// VAD is "silero" or "energy"; FloorDBFS the Silero windows' floor
	// (vad.Model.Floor as dBFS; -100: none); NoiseDBFS the callers' line
	// noise (0: digital silence between turns).
	VAD       string  `json:"vad"`
	FloorDBFS float64 `json:"vad_floor_dbfs,omitempty"`
	NoiseDBFS float64 `json:"callers_noise_dbfs"`
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
	// Transport is how the callers reached the server: "pcm" (the PCM
	// websocket, 16 kHz) or "sip" (SIP over UDP, PCMU RTP, 8 kHz).
	Transport string `json:"transport,omitempty"`
	// NotMeasured names the figures (JSON keys) this transport cannot
	// give; they are left out of the JSON (callssip.go).
	NotMeasured []string `json:"not_measured,omitempty"`
	N           int      `json:"calls"`
	HoldS       float64  `json:"hold_s"`
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
	// minus the providers' scripted latencies. The VAD's decision is
	// taken at the write (by the caller) of the frame that held the last
	// sample it decided on, so neither the callers' lateness nor the
	// audio-time mapping's error counts; EngineAddedAudio is the same
	// from the decision's audio time (MarkVADDetected plus FramingWait),
	// which counts both.
	EngineAdded      callsDist `json:"engine_added_ms"`
	EngineAddedAudio callsDist `json:"engine_added_from_audio_time_ms"`
	// EngineStages splits EngineAdded of the plain (no tool) turns by the
	// server's marks, each stage less its scripted latency: vad_stt (the
	// deciding frame's write to the STT final), turn (to the LLM request),
	// llm (to the first token), tts (to the first synthesised audio),
	// pacer (to the first audio out), send (to the caller's kernel).
	// Quantiles only (no CDF points).
	EngineStages map[string]callsDist `json:"engine_added_stages_ms,omitempty"`
	// Unreferenced counts joined turns whose deciding frame was not in
	// the caller's record: their EngineAdded is from the audio time.
	Unreferenced int `json:"unreferenced_turns"`
	// VADStopAfterEnd is, per joined turn, the VAD's speech stop
	// (MarkVADStop, an audio time on the server's clock) less the
	// utterance's end on the caller's: the VAD's own error on the
	// utterance's tail plus the offset of the server's audio times. Over
	// the PCM websocket those follow frame 0's arrival (Frame0Offset);
	// over SIP they are the frames' playout from the jitter buffer, so
	// the SIP run's excess over the pcm run's is the inbound RTP path's
	// hold, which EngineAdded (from MarkVADDetected) does not count.
	VADStopAfterEnd callsDist `json:"vad_stop_after_speech_end_ms"`
	// FirstAudio is the whole end of speech to first audio at the caller,
	// for reference.
	FirstAudio callsDist `json:"first_audio_ms"`
	// BargeIn is the interrupt (the server's mark, wall time, right
	// after the VAD's start decision) to the end of the last bot audio
	// received at the caller (its arrival plus 20 ms: the bot is quiet
	// once that frame played). BargeInFromSpeech is from the caller's
	// speech start plus the VAD's start delay (the write of the frame
	// that completed it) instead: it also counts how late the VAD heard
	// the start (the speech's onset, the model's inference).
	BargeIn           callsDist `json:"barge_in_to_silence_ms"`
	BargeInFromSpeech callsDist `json:"barge_in_from_speech_ms"`
	// BargeUnjoined counts barge-ins whose interrupt mark was not found.
	BargeUnjoined int `json:"barge_ins_unjoined"`
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
	// VAD is the calls' VAD: silero or energy.
	VAD string `json:"vad"`
	// BargeMissed counts barge-in turns that found no answer playing
	// (it had ended, or never came): not barge-ins.
	BargeMissed int `json:"barge_ins_missed"`
	// Unjoined counts answered turns whose server record did not match
	// (no latency event with the VAD's decision, or the server counted
	// the turn under another ordinal); Misheard the joined turns whose
	// transcript was not the utterance the caller said.
	Unjoined int `json:"unjoined_turns"`
	Misheard int `json:"misheard_turns"`
	// FramingWait is what was subtracted from EngineAdded besides the
	// scripted latencies: the rest of the 20 ms frame that held the VAD
	// decision's last sample (a Silero window ends inside a frame).
	FramingWait callsDist `json:"framing_wait_ms"`
	// Frame0Offset is the server's frame 0 start (its arrival at the
	// server's socket less 20 ms) minus the caller's: the error of the
	// audio-time mapping the VAD's decision time rests on.
	Frame0Offset callsDist `json:"frame0_offset_ms"`
	// Frame0Read is the part of Frame0Offset after the caller's write of
	// frame 0: to the server's read of it (the rest is the caller's
	// lateness).
	Frame0Read callsDist `json:"frame0_write_to_read_ms"`
	// SendLate is, per joined turn, how late the caller wrote the frame
	// that held the VAD decision's last sample (after the end of its
	// capture): the callers' own lateness, which EngineAddedAudio counts
	// and EngineAdded does not.
	SendLate callsDist `json:"callers_send_late_ms"`
	// UnstampedGaps counts the frame gaps left out of Jitter because a
	// frame's kernel time was its successor's (TCP merged the segments
	// while the niced callers were late to read: the frame came at that
	// time or before); MergedFirst the answered turns whose first audio
	// was such a frame (its time is an upper bound, kept in EngineAdded).
	UnstampedGaps int `json:"unstamped_gaps"`
	MergedFirst   int `json:"merged_first_audio"`
	// EndedEarly counts calls the server ended before the callers hung
	// up, EarlyReasons by end reason; WriteErrors the callers' frames that
	// could not be written after (their turns count as lost).
	EndedEarly   int            `json:"calls_ended_early"`
	EarlyReasons map[string]int `json:"early_end_reasons,omitempty"`
	WriteErrors  int            `json:"write_errors"`
	// GoroutinesLeft counts goroutines above the baseline after every
	// call ended and the server stopped.
	GoroutinesLeft int `json:"goroutines_left"`
	// StaleFrames counts bot frames received within 200 ms after a
	// clear; ToolRepeats tool calls run more than once.
	StaleFrames int `json:"stale_frames"`
	ToolRepeats int `json:"tool_repeats"`
	// SIPCounters are the SIP server's counters after the callers hung
	// up (sip.Server.Stats: responses by method and code, drops, RTP),
	// for a SIP run.
	SIPCounters map[string]uint64 `json:"sip_counters,omitempty"`
	// Error is why the run failed ("": it ran).
	Error string `json:"error,omitempty"`
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

// MarshalJSON leaves out the keys NotMeasured names (a zero there would
// read as a measurement).
func (r callsRun) MarshalJSON() ([]byte, error) {
	type plain callsRun
	b, err := json.Marshal(plain(r))
	if err != nil || len(r.NotMeasured) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range r.NotMeasured {
		delete(m, k)
	}
	return json.Marshal(m)
}
