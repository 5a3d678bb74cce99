package records

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// snapshot copies what the call knows into a record (not yet redacted),
// under the call's lock. final: the call ended, its end is in the record.
func (c *Call) snapshot() (r *Record, final bool, recording func() *Recording) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r = new(Record)
	*r = c.head
	r.Turns = make([]Turn, len(c.turns))
	for i, t := range c.turns {
		r.Turns[i] = turnOf(t)
	}
	r.BargeIns = c.bargeIns
	r.Transcript = make([]Line, len(c.lines))
	for i, l := range c.lines {
		r.Transcript[i] = Line{Epoch: l.epoch, Speaker: l.speaker, Text: string(l.text), At: l.at, Cut: l.cut, Keys: l.keys}
	}
	r.Tools = make([]ToolCall, len(c.tools))
	for i, t := range c.tools {
		r.Tools[i] = c.s.toolOf(t)
	}
	r.Usage = slices.Clone(c.usage)
	if r.Usage == nil {
		r.Usage = []Usage{}
	}
	r.Failures = []Failure{}
	if len(c.restarts) > 0 {
		r.Restarts = make(map[string]int, len(c.restarts))
		for k, v := range c.restarts {
			r.Restarts[k] = v
		}
	}
	r.Failovers = slices.Clone(c.failovers)
	if !c.ended {
		return r, false, nil
	}
	e := c.end
	r.Ended, r.EndReason, r.GaveUp = c.endedAt, e.Reason, string(e.GaveUp)
	if e.Restarts != nil {
		// The session's count is authoritative (it counts operator
		// restarts the events may have raced with).
		r.Restarts = nil
		for k, v := range e.Restarts {
			if v == 0 {
				continue
			}
			if r.Restarts == nil {
				r.Restarts = make(map[string]int, len(e.Restarts))
			}
			r.Restarts[string(k)] = v
		}
	}
	for stage, kinds := range e.Failures {
		for kind, n := range kinds {
			r.Failures = append(r.Failures, Failure{Stage: string(stage), Kind: kind, Count: n})
		}
	}
	slices.SortFunc(r.Failures, func(a, b Failure) int {
		return cmp.Or(cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Kind, b.Kind))
	})
	return r, true, c.recording
}

func turnOf(t turnState) Turn {
	out := Turn{Epoch: t.epoch, Marks: make(map[string]time.Time, len(t.marks)), BargeIn: t.bargeIn, Cut: t.cut}
	for k, at := range t.marks {
		out.Marks[k.String()] = at
	}
	for _, at := range t.rounds {
		if !at.IsZero() {
			out.RoundFirstTokens = append(out.RoundFirstTokens, at)
		}
	}
	out.LatencyMS = ms(t.latency.Microseconds())
	out.Stages = stagesOf(t.stages)
	return out
}

// stagesOf is serve.EventOf's rule: each stage is the step of the running
// sum in whole microseconds, as the total is, so they sum to LatencyMS
// exactly.
func stagesOf(st []messages.TurnStage) []Stage {
	if len(st) == 0 {
		return nil
	}
	out := make([]Stage, len(st))
	var cum time.Duration
	for i, s := range st {
		before := cum.Microseconds()
		cum += s.D
		out[i] = Stage{Name: s.Name, MS: ms(cum.Microseconds() - before)}
	}
	return out
}

func ms(us int64) float64 { return float64(us) / 1000 }

// toolOf is a settled tool call as the record keeps it; its arguments and
// result only when the policy keeps tool data (redacted later).
func (s *Service) toolOf(t toolState) ToolCall {
	a := t.audit
	out := ToolCall{Epoch: t.epoch, ID: t.id, Name: t.name, Outcome: a.Outcome, Started: a.Started, Settled: t.settled, KeyDigest: a.KeyDigest}
	if !a.Started.IsZero() && !t.settled.Before(a.Started) {
		out.DurationMS = ms(t.settled.Sub(a.Started).Microseconds())
	}
	if s.cfg.ToolData == Keep {
		if len(a.Args) > 0 {
			out.Args = json.RawMessage(a.Args) // replaced by the redactor's copy, or copied
		}
		out.Result = a.Result
	}
	return out
}

// finish applies the transcript and tool-data policies to a record and
// redacts what is left: transcript lines, tool arguments and results. It
// runs before a record or checkpoint is journaled.
func (s *Service) finish(r *Record) {
	counts := map[string]int{}
	add := func(m map[string]int) {
		for k, v := range m {
			counts[k] += v
		}
	}
	red := s.cfg.Redactor
	if s.cfg.Transcripts == Drop {
		r.Transcript, r.TranscriptRemoved = nil, true
	} else {
		for i := range r.Transcript {
			l := &r.Transcript[i]
			if l.Keys > 0 {
				// Key presses may be a PIN: the record keeps how many
				// there were (Keys), never which (whatever the
				// redactor's kinds).
				var n int
				l.Text, n = withholdKeys(l.Text)
				if n > 0 {
					counts["keys"] += n
				}
			}
			if red != nil {
				text, m := red.String(l.Text)
				l.Text = text
				add(m)
			}
		}
	}
	if s.cfg.ToolData == Drop {
		if len(r.Tools) > 0 {
			r.ToolDataRemoved = true
		}
	} else {
		for i := range r.Tools {
			t := &r.Tools[i]
			t.Args = s.redactArgs(t.Args, add)
			if red != nil && t.Result != "" {
				res, m := red.String(t.Result)
				t.Result = res
				add(m)
			}
		}
	}
	if len(counts) > 0 {
		r.Redactions = counts
	} else {
		r.Redactions = nil
	}
}

// redactArgs redacts a tool's arguments as JSON (keys kept); arguments
// that are not JSON are redacted as text and kept as a JSON string.
func (s *Service) redactArgs(raw json.RawMessage, add func(map[string]int)) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	red := s.cfg.Redactor
	if json.Valid(raw) {
		if red == nil {
			return slices.Clone(raw)
		}
		out, m, err := red.JSON(raw)
		if err == nil && json.Valid(out) {
			add(m)
			return out
		}
	}
	text := string(raw)
	if red != nil {
		var m map[string]int
		text, m = red.String(text)
		add(m)
	}
	out, _ := json.Marshal(text) // a string always encodes
	return out
}

// keysSaid is how the turn stage puts a caller's key presses into the
// turn's text for the model: "The caller pressed 4 2 #".
const keysSaid = "The caller pressed"

// withholdKeys replaces the keys of each "The caller pressed 4 2 #" in a
// caller's line with "[keys]", and counts the replacements.
func withholdKeys(text string) (string, int) {
	var b strings.Builder
	n := 0
	for {
		i := strings.Index(text, keysSaid)
		if i < 0 {
			b.WriteString(text)
			return b.String(), n
		}
		j := i + len(keysSaid)
		k := j
		for k < len(text) && (text[k] == ' ' || text[k] >= '0' && text[k] <= '9' || text[k] == '*' || text[k] == '#' || text[k] >= 'A' && text[k] <= 'D') {
			k++
		}
		b.WriteString(text[:j])
		if strings.TrimSpace(text[j:k]) != "" {
			b.WriteString(" [keys]")
			n++
			if k > j && text[k-1] == ' ' {
				b.WriteByte(' ')
			}
		} else {
			b.WriteString(text[j:k])
		}
		text = text[k:]
	}
}
