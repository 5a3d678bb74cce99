package agent

import "fmt"

// DefaultWindowTokens is the default bound of a request's estimated size
// (EstimateMessageTokens over its messages). 24 000 estimated tokens is
// about 96 KB of text: a long call's half hour of talk, or a tool loop
// with a dozen sizeable results, fits whole; it stays well inside the
// smallest context window we target (32 k for the hosted small models,
// with room for the tools' schemas and the answer), and keeps the input
// cost and the time to first token of one request bounded. The estimate
// is rough (bytes / 4), so the bound is set with a margin, not to the
// model's limit.
const DefaultWindowTokens = 24000

// MinWindowTokens is the smallest bound Validate accepts: under it a
// system prompt and one turn would not fit, and every request would be
// cut to its current turn. A smaller number is almost surely a mistake of
// unit (Window itself takes any bound).
const MinWindowTokens = 1000

// WindowNote is the text of the system note that stands where the left
// out history was; %d is the number of messages left out.
const WindowNote = "Note: the %d earliest messages of this call are left out of this request to keep it short; the conversation goes on from here."

// CompactedResult is the content that replaces a tool result of an older
// round of the current turn when the turn alone is over the bound. It
// keeps the call id and IsError; the model saw the full content in the
// round after it, and is told not to call again for it.
const CompactedResult = "[result left out of this request to keep it short: the call was answered earlier in this turn; do not repeat it]"

// WindowConfig bounds the requests built from a context (Window). The
// zero value takes the defaults.
type WindowConfig struct {
	// MaxTokens bounds a request's estimated size in tokens: 0 means
	// DefaultWindowTokens, a negative value turns the window off (every
	// request carries the whole context).
	MaxTokens int
}

// Validate rejects a positive bound under MinWindowTokens, wrapping
// ErrInvalidWindowConfig.
func (c WindowConfig) Validate() error {
	if c.MaxTokens > 0 && c.MaxTokens < MinWindowTokens {
		return fmt.Errorf("%w: MaxTokens %d is under %d (0 is the default, negative is off)", ErrInvalidWindowConfig, c.MaxTokens, MinWindowTokens)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c WindowConfig) withDefaults() WindowConfig {
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultWindowTokens
	}
	return c
}

// WindowStats says what Window did.
type WindowStats struct {
	// Dropped: history messages left out (the note not counted).
	Dropped int
	// Compacted: tool results of the current turn's older rounds whose
	// content was replaced by CompactedResult.
	Compacted int
	// Tokens is the estimated size of the output.
	Tokens int
	// Over: the output is still over the bound: only the prompt and the
	// current turn are left, every older round's results compacted.
	Over bool
}

// Windowed tells whether Window changed the messages.
func (s WindowStats) Windowed() bool { return s.Dropped > 0 || s.Compacted > 0 }

// Window bounds the messages of one request by their estimated size
// (EstimateMessageTokens), keeping them valid for every vendor when they
// are a valid context (Context.Validate):
//   - the leading system messages (the prompt) are always kept;
//   - the current turn (from the last user message on, with the system
//     notes just before it; without a user message, everything after the
//     prompt) is kept whole, but for the compaction below;
//   - older history is left out oldest first, in whole exchanges (a user
//     message with the notes just before it, up to the next such start),
//     so a call is never parted from its results and the first message
//     after the prompt is a user message (Anthropic and Gemini need it).
//     The assistant's opening before the first user message (a greeting)
//     is the first exchange to go. One system note (WindowNote) after the
//     prompt tells the model how many messages were left out;
//   - when the prompt and the current turn alone are over the bound (a
//     long tool loop), the results of the turn's older rounds are
//     compacted oldest first (CompactedResult, call id and IsError kept)
//     until it fits; the latest round is never touched.
//
// Window does not modify msgs. Under the bound, or with the window off, it
// returns msgs itself and allocates nothing; otherwise it returns a new
// slice that shares the kept messages' inner slices with msgs.
func Window(msgs []Message, cfg WindowConfig) ([]Message, WindowStats) {
	return WindowFrom(msgs, cfg, 0)
}

// WindowLowWater is the share of the bound a cut aims for (in
// hundredths): when the history must be cut, WindowFrom leaves out enough
// to get under 80% of the bound, so the next requests of the call, each a
// little longer, can keep the same cut.
const WindowLowWater = 80

// WindowFrom is Window for the next request of a call whose previous
// request left out its first from history messages (its
// WindowStats.Dropped). Over the bound, it keeps that cut when the request
// fits with it, so the start of the request stays the same byte for byte
// from request to request (the vendors' prompt caches match on a prefix);
// when it must cut further, it cuts to WindowLowWater percent of the bound.
// A from that is not where an exchange begins (the context was cut since)
// is ignored.
func WindowFrom(msgs []Message, cfg WindowConfig, from int) ([]Message, WindowStats) {
	if cfg.MaxTokens < 0 {
		return msgs, WindowStats{}
	}
	limit := cfg.withDefaults().MaxTokens
	total := 0
	for i := range msgs {
		total += EstimateMessageTokens(msgs[i])
	}
	if total <= limit {
		return msgs, WindowStats{Tokens: total}
	}

	prompt := 0
	for prompt < len(msgs) && msgs[prompt].Role == RoleSystem {
		prompt++
	}
	cur := turnStart(msgs, prompt, len(msgs))

	// Leave out whole exchanges, oldest first, while over the bound. The
	// note is weighed at its largest (every history message left out), so
	// its real size can only be smaller.
	note := EstimateMessageTokens(System(fmt.Sprintf(WindowNote, cur-prompt)))
	cut := prompt // history kept is msgs[cut:cur]
	size := total
	// advance leaves out the exchange at cut.
	advance := func() {
		next := nextExchange(msgs, cut, cur)
		for i := cut; i < next; i++ {
			size -= EstimateMessageTokens(msgs[i])
		}
		cut = next
	}
	if from > 0 && prompt+from <= cur {
		for cut < prompt+from {
			advance()
		}
		if cut != prompt+from {
			// Not an exchange start: start over.
			cut, size = prompt, total
		}
	}
	if cut < cur && size+note > limit {
		low := limit * WindowLowWater / 100
		for cut < cur && size+note > low {
			advance()
		}
	}
	dropped := cut - prompt
	if dropped > 0 {
		note = EstimateMessageTokens(System(windowNote(dropped)))
		size += note
	}

	// Still over: compact the older rounds of the current turn.
	latest := len(msgs) // start of the latest round
	for i := len(msgs) - 1; i >= cur; i-- {
		if msgs[i].Role == RoleAssistant && len(msgs[i].ToolCalls) > 0 {
			latest = i
			break
		}
	}
	compact := 0 // msgs[cur:compactEnd] has its tool results compacted
	compactEnd := cur
	marker := EstimateMessageTokens(Message{Role: RoleTool, Text: CompactedResult})
	for i := cur; i < latest && size > limit; i++ {
		compactEnd = i + 1
		if msgs[i].Role != RoleTool {
			continue
		}
		if w := EstimateMessageTokens(msgs[i]); w > marker {
			size += marker - w
			compact++
		}
	}

	if dropped == 0 && compact == 0 {
		// Nothing to leave out (the prompt and one round are the whole
		// request): the request goes as it is, over the bound.
		return msgs, WindowStats{Tokens: size, Over: true}
	}
	out := make([]Message, 0, prompt+1+len(msgs)-cut)
	out = append(out, msgs[:prompt]...)
	if dropped > 0 {
		out = append(out, System(windowNote(dropped)))
	}
	out = append(out, msgs[cut:]...)
	if compact > 0 {
		base := len(out) - (len(msgs) - cut) // index in out of msgs[cut]
		for i := cur; i < compactEnd; i++ {
			m := &out[base+i-cut]
			if m.Role == RoleTool && EstimateMessageTokens(*m) > marker {
				m.Text = CompactedResult
			}
		}
	}
	return out, WindowStats{Dropped: dropped, Compacted: compact, Tokens: size, Over: size > limit}
}

// windowNote is the note standing for n left out messages.
func windowNote(n int) string {
	return fmt.Sprintf(WindowNote, n)
}

// turnStart is where the current turn of msgs[from:to] begins: its last
// user message, with the system notes just before it (pushed at the turn's
// start); from when there is no user message.
func turnStart(msgs []Message, from, to int) int {
	for i := to - 1; i >= from; i-- {
		if msgs[i].Role == RoleUser {
			for i > from && msgs[i-1].Role == RoleSystem {
				i--
			}
			return i
		}
	}
	return from
}

// nextExchange is where the exchange after the one starting at from
// begins, at most to: the next user message (with the notes just before
// it) after from's own user message.
func nextExchange(msgs []Message, from, to int) int {
	i := from
	for i < to && msgs[i].Role == RoleSystem {
		i++ // the notes of from's exchange
	}
	if i < to && msgs[i].Role == RoleUser {
		i++ // from's own user message
	}
	for ; i < to; i++ {
		if msgs[i].Role != RoleUser {
			continue
		}
		for i > from && msgs[i-1].Role == RoleSystem {
			i--
		}
		return i
	}
	return to
}
