package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// T0 is the fixtures' clock: every time in them is T0 plus an offset.
var T0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// FullRecord is a record with every field set (except the removal flags,
// which contradict the parts being there: see RemovedRecord), twelve turns
// of the realistic size (about 9 KiB of JSON). Times are UTC with
// nanoseconds, so a store that rounds them fails the round trip.
func FullRecord(callID string, started time.Time) *records.Record {
	t := func(d time.Duration) time.Time { return started.Add(d) }
	r := &records.Record{
		Version: records.SchemaVersion, CallID: callID, Node: "node-a", Transport: "sip", Direction: "inbound",
		Trunk: "main", Agent: "dentist", AgentDigest: "3f1d2c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff00",
		Caller:  records.Party{Number: "+441632960001", Hash: "caller-hash-" + callID},
		Callee:  records.Party{Number: "+441632960002", Hash: "callee-hash-" + callID},
		Started: started, Answered: t(900*time.Millisecond + 7), Ended: t(3*time.Minute + 11),
		EndReason: "hangup", GaveUp: "tts", BargeIns: 2,
		Restarts:   map[string]int{"tts": 1},
		Failovers:  []records.Failover{{Stage: "tts", From: "cartesia", To: "elevenlabs", At: t(40 * time.Second)}},
		TraceID:    "4bf92f3577b34da6a3ce929d0e0e4736",
		Redactions: map[string]int{"phone": 1, "card": 2},
		Recording: &records.Recording{Format: "wav", Key: "2026/12/03/" + callID + ".wav", Bytes: 11_520_044,
			DurationMS: 180_000.5, Paused: []records.Span{{From: t(61 * time.Second), To: t(75 * time.Second)}}, DroppedFrames: 3},
		Usage: []records.Usage{
			{Kind: records.UsageLLM, Vendor: "openai", Model: "gpt-4o-mini", Requests: 14, InputTokens: 21_000, OutputTokens: 900, CachedTokens: 12_000},
			{Kind: records.UsageSTT, Vendor: "deepgram", Model: "nova-3", Requests: 1, AudioSeconds: 180.25},
			{Kind: records.UsageTTS, Vendor: "cartesia", Model: "sonic-2", Requests: 12, Characters: 1_100},
		},
		Failures: []records.Failure{{Stage: "tts", Kind: "timeout", Count: 2}},
		Tools: []records.ToolCall{
			{Epoch: 3, ID: "call_1", Name: "find_slot", Outcome: "ok", Started: t(30 * time.Second), Settled: t(30*time.Second + 200*time.Millisecond),
				DurationMS: 200.5, KeyDigest: "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
				Args: json.RawMessage(`{"day":"tuesday"}`), Result: `{"slots":["14:30","16:15"]}`},
			{Epoch: 5, ID: "call_2", Name: "book", Outcome: "failed", Started: t(50 * time.Second), DurationMS: 300,
				Args: json.RawMessage(`{"slot":"14:30"}`)},
		},
	}
	marks := []string{"vad_stop", "stt_final", "turn_end", "llm_request", "llm_first_token", "tts_first_audio", "first_audio_out"}
	for k := range 12 {
		at := t(time.Duration(k*10)*time.Second + time.Duration(k))
		m := map[string]time.Time{}
		for j, name := range marks {
			m[name] = at.Add(time.Duration(j*60) * time.Millisecond)
		}
		r.Turns = append(r.Turns, records.Turn{Epoch: uint64(k + 1), Marks: m, RoundFirstTokens: []time.Time{m["llm_first_token"]},
			LatencyMS: 612.5, Stages: []records.Stage{{Name: "stt", MS: 180}, {Name: "llm", MS: 260}, {Name: "tts", MS: 150.5}},
			BargeIn: k == 4, Cut: k == 4})
		r.Transcript = append(r.Transcript,
			records.Line{Epoch: uint64(k + 1), Speaker: records.SpeakerCaller, Text: "I'd like to move my appointment to next Tuesday afternoon if that works", At: at, Keys: 1},
			records.Line{Epoch: uint64(k + 1), Speaker: records.SpeakerBot, Text: "Of course. I can offer Tuesday at two thirty or at four fifteen; which", At: at.Add(time.Second), Cut: true})
	}
	return r
}

// RemovedRecord is FullRecord as the policies or the sweeper leave it:
// transcript, tool data and recording removed, and marked so.
func RemovedRecord(callID string, started time.Time) *records.Record {
	r := FullRecord(callID, started)
	r.Transcript, r.TranscriptRemoved = nil, true
	for i := range r.Tools {
		r.Tools[i].Args, r.Tools[i].Result = nil, ""
	}
	r.ToolDataRemoved = true
	r.Recording.Removed = true
	r.Caller, r.Callee = records.Party{}, records.Party{}
	return r
}

// zeroFields lists the fields of v that hold their zero value, by path
// (into structs, pointers, every element of slices and one value of
// maps), except the paths in allowed.
func zeroFields(v reflect.Value, path string, allowed map[string]bool) []string {
	if allowed[path] {
		return nil
	}
	if v.IsZero() {
		return []string{path}
	}
	var out []string
	switch v.Kind() {
	case reflect.Pointer:
		return zeroFields(v.Elem(), path, allowed)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return nil
		}
		for i := range v.NumField() {
			out = append(out, zeroFields(v.Field(i), path+"."+v.Type().Field(i).Name, allowed)...)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // json.RawMessage: set is enough
			return nil
		}
		// A field counts as set when one element sets it.
		zero := map[string]int{}
		for i := range v.Len() {
			for _, p := range zeroFields(v.Index(i), path+"[]", allowed) {
				zero[p]++
			}
		}
		for p, n := range zero {
			if n == v.Len() {
				out = append(out, p)
			}
		}
	case reflect.Map:
		it := v.MapRange()
		it.Next()
		out = append(out, zeroFields(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), allowed)...)
	}
	return out
}
