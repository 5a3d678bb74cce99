package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// ErrCheck marks a failed check of a run.
var ErrCheck = fmt.Errorf("sim: check failed")

// FirstAudioAfter is the first bot audio the client received at or after
// t, and whether there was one.
func (r *Result) FirstAudioAfter(t time.Time) (time.Time, bool) {
	for _, rec := range r.Records {
		if rec.Kind == RecordAudio && !rec.At.Before(t) {
			return rec.At, true
		}
	}
	return time.Time{}, false
}

// SpeechEnds are the ends of the caller's utterances, in call time.
func (r *Result) SpeechEnds(s *Scenario) []time.Time {
	var out []time.Time
	for _, seg := range s.SpeechSegments() {
		out = append(out, r.Start.Add(seg.End))
	}
	return out
}

// CheckBotAudioWithin checks that the bot's audio starts within max after
// t.
func (r *Result) CheckBotAudioWithin(t time.Time, max time.Duration) error {
	at, ok := r.FirstAudioAfter(t)
	if !ok {
		return fmt.Errorf("%w: no bot audio after %v", ErrCheck, t.Sub(r.Start))
	}
	if d := at.Sub(t); d > max {
		return fmt.Errorf("%w: bot audio %v after %v, over the bound %v", ErrCheck, d, t.Sub(r.Start), max)
	}
	return nil
}

// Interrupts counts the clears that reached the client (the interrupts at
// the output).
func (r *Result) Interrupts() int {
	n := 0
	for _, rec := range r.Records {
		if rec.Kind == RecordClear {
			n++
		}
	}
	return n
}

// Turns counts the turns that ended (timelines with a turn end).
func (r *Result) Turns() int {
	n := 0
	for _, t := range r.Timelines {
		if _, ok := t.Marks[messages.MarkTurnEnd]; ok {
			n++
		}
	}
	return n
}

// CheckNoStaleAudio walks the records in wire order: after a clear to
// epoch e, no audio of an older epoch may arrive.
func (r *Result) CheckNoStaleAudio() error {
	var newest messages.Epoch
	for i, rec := range r.Records {
		switch rec.Kind {
		case RecordClear:
			newest = max(newest, rec.Epoch)
		case RecordAudio:
			if rec.Epoch < newest {
				return fmt.Errorf("%w: record %d: audio of epoch %d at %v after a clear to epoch %d",
					ErrCheck, i, rec.Epoch, rec.At.Sub(r.Start), newest)
			}
		}
	}
	return nil
}

// cutAt is when epoch e was cut on the wire (the first clear to a newer
// epoch after its audio), or the zero time.
func (r *Result) cutAt(e messages.Epoch) time.Time {
	for _, rec := range r.Records {
		if rec.Kind == RecordClear && rec.Epoch > e {
			return rec.At
		}
	}
	return time.Time{}
}

// PlayedWords is the oracle of what the caller heard of epoch e: the words
// whose first sample played before the epoch was cut, a frame playing
// continuously from its arrival plus the client's PlayoutDelay (a clear
// drops what the client had not played).
func (r *Result) PlayedWords(e messages.Epoch) []string {
	var frames []Record
	for _, rec := range r.Records {
		if rec.Kind == RecordAudio && rec.Epoch == e {
			frames = append(frames, rec)
		}
	}
	cut := r.cutAt(e)
	var out []string
	for _, w := range r.Words[e] {
		heard := false
		for _, f := range frames {
			if w.Offset >= f.Offset && w.Offset < f.Offset+messages.FrameDuration {
				starts := f.At.Add(r.PlayoutDelay + w.Offset - f.Offset)
				heard = cut.IsZero() || starts.Before(cut)
				break
			}
		}
		if !heard {
			break
		}
		out = append(out, w.Text)
	}
	return out
}

// TurnEpochs lists the epochs of the user turns, in order.
func (r *Result) TurnEpochs() []messages.Epoch {
	var out []messages.Epoch
	for _, t := range r.Timelines {
		if _, ok := t.Marks[messages.MarkTurnEnd]; ok {
			out = append(out, t.Epoch)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// SaidPerTurn joins the assistant words between user messages: one entry
// per user message, in order.
func SaidPerTurn(c *agent.Context) [][]string {
	var out [][]string
	for i := 0; i < c.Len(); i++ {
		m := c.At(i)
		switch m.Role {
		case agent.RoleUser:
			out = append(out, nil)
		case agent.RoleAssistant:
			if len(out) > 0 {
				out[len(out)-1] = append(out[len(out)-1], strings.Fields(m.Text)...)
			}
		}
	}
	return out
}

// CheckContextMatchesPlayed checks that every turn's assistant text in the
// context is what the caller heard of that turn: exactly, or for a turn
// cut by a barge-in, up to slack words fewer at the cut (never more).
func (r *Result) CheckContextMatchesPlayed(slack int) error {
	said := SaidPerTurn(r.Context)
	epochs := r.TurnEpochs()
	if len(said) != len(epochs) {
		return fmt.Errorf("%w: %d user messages in the context, %d turns ended", ErrCheck, len(said), len(epochs))
	}
	for i, e := range epochs {
		played := r.PlayedWords(e)
		got := said[i]
		if len(got) > len(played) {
			return fmt.Errorf("%w: turn %d (epoch %d): context holds %q, more than heard %q", ErrCheck, i, e, got, played)
		}
		for j := range got {
			if got[j] != played[j] {
				return fmt.Errorf("%w: turn %d (epoch %d): context %q is not a prefix of heard %q", ErrCheck, i, e, got, played)
			}
		}
		allowed := 0
		if !r.cutAt(e).IsZero() {
			allowed = slack
		}
		if len(played)-len(got) > allowed {
			return fmt.Errorf("%w: turn %d (epoch %d): context %q lacks heard words %q (slack %d)", ErrCheck, i, e, got, played, allowed)
		}
	}
	return nil
}

// CheckRoles checks the context's shape: it validates (every call answered
// once, no empty assistant message), starts with an optional system
// message and a user message, and no assistant message precedes the first
// user message.
func (r *Result) CheckRoles() error {
	if err := r.Context.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrCheck, err)
	}
	seenUser := false
	for i := 0; i < r.Context.Len(); i++ {
		switch m := r.Context.At(i); m.Role {
		case agent.RoleUser:
			seenUser = true
		case agent.RoleAssistant, agent.RoleTool:
			if !seenUser {
				return fmt.Errorf("%w: message %d (%s) before any user message", ErrCheck, i, m.Role)
			}
		case agent.RoleSystem:
		}
	}
	return nil
}

// CheckNoCallerAudioLost checks that every frame the caller sent reached
// the STT provider: the input side keeps all audio, barge-ins and
// reconnects included (frames are only ever dropped when a stage is far
// behind, and then counted, which fails this check too).
func (r *Result) CheckNoCallerAudioLost() error {
	if r.Tree == nil {
		return nil // the call ended before it could be probed
	}
	for _, c := range r.Tree.Children {
		if c.Name != string(messages.StageSTT) {
			continue
		}
		// A panic of the vad drops the frame it failed on (a restart drops
		// the failing message): that loss is the panic's, and counted.
		lost := 0
		if r.Stats != nil {
			lost = r.Stats.Panics[messages.StageVAD]
		}
		if got := int(c.Counters["frames"]); got+lost != r.FramesIn {
			return fmt.Errorf("%w: %d caller frames reached the stt provider, %d were sent (dropped %d, vad panics %d)",
				ErrCheck, got, r.FramesIn, c.Counters["frames_dropped"], lost)
		}
	}
	return nil
}
