package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/opclient"
)

// The renderers of `brisvox records`: pure functions of the answers,
// checked against golden files like brisvox calls' (calls_render.go's
// table, clean and waterfall). Every text of a record goes through clean:
// a transcript holds what a caller said, and must not reach the terminal
// as an escape sequence.

// recordColumns are the columns of `brisvox records list`.
var recordColumns = []column{
	{head: "ID", shrink: 12}, {head: "STARTED (UTC)"}, {head: "DURATION", right: true}, {head: "TRANSPORT", shrink: 7},
	{head: "AGENT", shrink: 8}, {head: "END REASON", shrink: 10}, {head: "TURNS", right: true}, {head: "TOOLS", right: true},
}

// fmtStarted is a record's start as the list shows it.
func fmtStarted(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// fmtDuration is a call's length: 4s, 3m12s, 1h02m; "-" unknown.
func fmtDuration(from, to time.Time) string {
	if from.IsZero() || to.IsZero() || to.Before(from) {
		return "-"
	}
	return fmtAge(to.Sub(from).Milliseconds())
}

// renderRecordList is the table of records, in the order given.
func renderRecordList(w io.Writer, rs []opclient.RecordSummary) {
	if len(rs) == 0 {
		writeLines(w, []string{"no records (of calls that ended) match"})
		return
	}
	rows := make([][]string, 0, len(rs))
	for _, r := range rs {
		rows = append(rows, []string{
			clean(r.CallID), fmtStarted(r.Started), fmtDuration(r.Started, r.Ended), clean(r.Transport), clean(r.Agent),
			clean(r.EndReason), strconv.Itoa(r.Turns), strconv.Itoa(r.Tools),
		})
	}
	writeLines(w, table(recordColumns, rows))
}

// renderRecord is one record: its header, transcript, tools and turn
// waterfall.
func renderRecord(w io.Writer, r *opclient.Record) {
	lines := recordHeader(r)
	lines = append(lines, "")
	lines = append(lines, transcriptLines(r)...)
	if len(r.Tools) > 0 {
		lines = append(lines, "")
		lines = append(lines, toolLines(r.Tools)...)
	}
	lines = append(lines, "")
	lines = append(lines, waterfall(recordTimelines(r.Turns))...)
	writeLines(w, lines)
}

// recordHeader is who the call was, how it went and what it used, a
// line each.
func recordHeader(r *opclient.Record) []string {
	dir := ""
	if r.Direction != "" {
		dir = clean(r.Direction) + ", "
	}
	on := ""
	if r.Node != "" {
		on = " on " + truncate(clean(r.Node), 20)
	}
	out := []string{fmt.Sprintf("call %s%s (%s%s, agent %s)", truncate(clean(r.CallID), 40), on, dir,
		truncate(clean(r.Transport), 10), truncate(clean(r.Agent), 24))}
	end := "ended: " + clean(r.EndReason)
	if r.GaveUp != "" {
		end += " (gave up on " + clean(r.GaveUp) + ")"
	}
	out = append(out, fmt.Sprintf("started %s UTC, lasted %s, %s", fmtStarted(r.Started), fmtDuration(r.Started, r.Ended), end))
	var who []string
	for _, p := range []struct {
		name  string
		party opclient.Party
	}{{"caller", r.Caller}, {"callee", r.Callee}} {
		switch {
		case p.party.Number != "":
			who = append(who, p.name+" "+clean(p.party.Number))
		case p.party.Hash != "":
			who = append(who, p.name+" hash "+truncate(clean(p.party.Hash), 16))
		}
	}
	if r.Trunk != "" {
		who = append(who, "trunk "+clean(r.Trunk))
	}
	if r.AgentDigest != "" {
		who = append(who, "agent file "+truncate(clean(r.AgentDigest), 12))
	}
	if r.TraceID != "" {
		who = append(who, "trace "+clean(r.TraceID))
	}
	if len(who) > 0 {
		out = append(out, strings.Join(who, ", "))
	}
	how := []string{plural(len(r.Turns), "turn"), plural(r.BargeIns, "barge-in"), plural(len(r.Tools), "tool call")}
	if rec := r.Recording; rec != nil {
		s := "recording "
		if rec.Removed {
			s += "removed"
		} else {
			s += fmtAge(int64(rec.DurationMS)) + " " + clean(rec.Format)
			if len(rec.Paused) > 0 {
				s += ", " + plural(len(rec.Paused), "pause")
			}
			if rec.DroppedFrames > 0 {
				s += ", " + plural(rec.DroppedFrames, "frame") + " dropped"
			}
		}
		how = append(how, s)
	} else {
		how = append(how, "no recording")
	}
	out = append(out, strings.Join(how, ", "))
	if len(r.Usage) > 0 {
		var us []string
		for _, u := range r.Usage {
			s := clean(u.Kind) + " " + clean(u.Vendor)
			if u.Model != "" {
				s += "/" + clean(u.Model)
			}
			switch u.Kind {
			case "llm":
				s += fmt.Sprintf(" %d in %d out", u.InputTokens, u.OutputTokens)
			case "stt":
				s += fmt.Sprintf(" %.1fs", u.AudioSeconds)
			case "tts":
				s += fmt.Sprintf(" %d chars", u.Characters)
			}
			us = append(us, s)
		}
		out = append(out, wrapText("usage: "+strings.Join(us, "; "), columns)...)
	}
	var trouble []string
	for _, f := range r.Failures {
		trouble = append(trouble, fmt.Sprintf("%s %s x%d", clean(f.Stage), clean(f.Kind), f.Count))
	}
	for _, st := range slices.Sorted(maps.Keys(r.Restarts)) {
		trouble = append(trouble, fmt.Sprintf("%s restarted x%d", clean(st), r.Restarts[st]))
	}
	for _, f := range r.Failovers {
		trouble = append(trouble, fmt.Sprintf("%s %s -> %s", clean(f.Stage), clean(f.From), clean(f.To)))
	}
	if len(trouble) > 0 {
		out = append(out, wrapText("failures: "+strings.Join(trouble, "; "), columns)...)
	}
	if len(r.Redactions) > 0 {
		var rs []string
		for _, k := range slices.Sorted(maps.Keys(r.Redactions)) {
			rs = append(rs, fmt.Sprintf("%s %d", clean(k), r.Redactions[k]))
		}
		out = append(out, "redacted: "+strings.Join(rs, ", "))
	}
	return out
}

// transcriptWidth is the room of a transcript line's text.
const transcriptWidth = columns - 20

// transcriptLines is the transcript, a line a turn wrapped to the
// terminal: its time, speaker and words, a cut marked where the caller
// cut the bot off.
func transcriptLines(r *opclient.Record) []string {
	switch {
	case r.TranscriptRemoved:
		return []string{"transcript: removed (by policy or retention)"}
	case len(r.Transcript) == 0:
		return []string{"transcript: none"}
	}
	out := []string{"transcript:"}
	for _, l := range r.Transcript {
		text := clean(l.Text)
		if l.Keys > 0 {
			text += fmt.Sprintf(" [%s]", plural(l.Keys, "key"))
		}
		if l.Cut {
			text += " [cut]"
		}
		who := "caller"
		if l.Speaker == opclient.SpeakerBot {
			who = "bot"
		}
		lead := fmt.Sprintf("  %-8s  %-6s  ", l.At.UTC().Format("15:04:05"), who)
		for i, part := range wrapText(text, transcriptWidth) {
			if i == 0 {
				out = append(out, lead+part)
			} else {
				out = append(out, strings.Repeat(" ", len(lead))+part)
			}
		}
	}
	return out
}

// wrapText breaks s at spaces into lines of at most w columns (a word
// wider than a line is cut).
func wrapText(s string, w int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		word = truncate(word, w)
		switch {
		case line == "":
			line = word
		case textWidth(line)+1+textWidth(word) <= w:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
	}
	return append(out, line)
}

// toolLines are the tool calls: turn, name, outcome, duration.
func toolLines(ts []opclient.ToolCall) []string {
	cols := []column{{head: "TURN", right: true}, {head: "TOOL", shrink: 12}, {head: "OUTCOME", shrink: 10}, {head: "MS", right: true}, {head: "ARGS"}}
	rows := make([][]string, 0, len(ts))
	for _, t := range ts {
		args := "-"
		if len(t.Args) > 0 {
			args = truncate(clean(string(t.Args)), 40)
		}
		rows = append(rows, []string{strconv.FormatUint(t.Epoch, 10), clean(t.Name), clean(t.Outcome), fmt.Sprintf("%.0f", t.DurationMS), args})
	}
	return append([]string{"tools:"}, table(cols, rows)...)
}

// recordTimelines are a record's turns as the waterfall draws them:
// milliseconds from each turn's vad_stop (its earliest mark when it has
// none), as the live API gives them (serve's timelinesOf).
func recordTimelines(turns []opclient.Turn) []opclient.TurnTimeline {
	out := make([]opclient.TurnTimeline, 0, len(turns))
	for _, t := range turns {
		if len(t.Marks) == 0 {
			continue
		}
		zero, ok := t.Marks[opclient.MarkVADStop]
		if !ok {
			for _, at := range t.Marks {
				if zero.IsZero() || at.Before(zero) {
					zero = at
				}
			}
		}
		marks := make(map[string]float64, len(t.Marks))
		for k, at := range t.Marks {
			marks[k] = float64(at.Sub(zero).Microseconds()) / 1000
		}
		out = append(out, opclient.TurnTimeline{Epoch: t.Epoch, At: zero.UTC(), MarksMS: marks})
	}
	return out
}

// renderAudit is the erasures, oldest first.
func renderAudit(w io.Writer, es []opclient.AuditEntry) {
	if len(es) == 0 {
		writeLines(w, []string{"no erasures"})
		return
	}
	cols := []column{{head: "AT (UTC)"}, {head: "BY", shrink: 8}, {head: "SELECTOR", shrink: 20}, {head: "ERASED", right: true}, {head: "REASON", shrink: 10}}
	rows := make([][]string, 0, len(es))
	for _, e := range es {
		sel := "call " + clean(e.CallID)
		if e.CallID == "" {
			sel = "caller " + truncate(clean(e.CallerHash), 16)
		}
		rows = append(rows, []string{fmtStarted(e.At), clean(e.By), sel, strconv.Itoa(e.Erased), clean(e.Reason)})
	}
	writeLines(w, table(cols, rows))
}
