package rules

import (
	"context"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/brisvox/brisvox/providers"
)

// LLM is the rules provider. It holds only its Config: safe for concurrent
// use, and every Stream is independent.
type LLM struct {
	cfg Config
}

var _ providers.LLM = (*LLM)(nil)

// New makes a provider; a zero delay is none. The error wraps
// ErrInvalidConfig.
func New(cfg Config) (*LLM, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &LLM{cfg: cfg}, nil
}

// Config returns the config in use.
func (l *LLM) Config() Config { return l.cfg }

// Warm has nothing to open: it returns nil at once.
func (l *LLM) Warm(context.Context) error { return nil }

// Stream decides the answer to req at once and returns it as a stream
// paced by the config. A nil request is an error wrapping
// ErrInvalidRequest; a done ctx returns its error.
func (l *LLM) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, fmt.Errorf("%w: nil request", ErrInvalidRequest)
	}
	c := newConversation(req)
	r := c.respond()
	evs, due := l.events(r, c.ncalls, inputWords(req))
	return newStream(ctx, time.Now(), evs, due), nil
}

// inputWords estimates the request's tokens: the words of its messages'
// text and of its calls' arguments.
func inputWords(req *providers.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += countWords(m.Text)
		for _, c := range m.ToolCalls {
			n += countWords(c.Name) + countWords(string(c.Arguments))
		}
	}
	return n
}

// events lays the response out as a stream: a word per text event, each
// call as a first fragment (index, id, name) and its arguments in two
// pieces, then Usage and Done. due[i] is when event i is sent, from the
// stream's start: the first at FirstToken, each content event TokenGap
// after the one before, Usage and Done with the last.
func (l *LLM) events(r response, ncalls, input int) ([]providers.LLMEvent, []time.Duration) {
	var evs []providers.LLMEvent
	output := 0
	for _, w := range textPieces(r.text) {
		evs = append(evs, providers.LLMEvent{Kind: providers.LLMText, Text: w})
	}
	output += countWords(r.text)
	for i, c := range r.calls {
		evs = append(evs, providers.LLMEvent{Kind: providers.LLMToolCall, Index: i, ID: callID(ncalls, i), Name: c.name})
		a, b := halves(c.args)
		evs = append(evs,
			providers.LLMEvent{Kind: providers.LLMToolCall, Index: i, Args: a},
			providers.LLMEvent{Kind: providers.LLMToolCall, Index: i, Args: b})
		output += countWords(c.name) + countWords(c.args)
	}
	content := len(evs)
	stop := "stop"
	if len(r.calls) > 0 {
		stop = "tool_calls"
	}
	evs = append(evs,
		providers.LLMEvent{Kind: providers.LLMUsage, Usage: providers.Usage{InputTokens: input, OutputTokens: output}},
		providers.LLMEvent{Kind: providers.LLMDone, StopReason: stop})
	due := make([]time.Duration, len(evs))
	for i := range due {
		k := min(i, max(content-1, 0))
		due[i] = l.cfg.FirstToken + time.Duration(k)*l.cfg.TokenGap
	}
	return evs, due
}

// textPieces cuts text before every word but the first: each piece is a
// word and the whitespace after it, and the pieces joined are text.
func textPieces(text string) []string {
	var out []string
	start, inWord, seen := 0, false, false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if !space && !inWord && seen {
			out = append(out, text[start:i])
			start = i
		}
		seen = seen || !space
		inWord = !space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// halves cuts s in two at a rune boundary near its middle; both halves are
// non-empty for s of two runes or more.
func halves(s string) (string, string) {
	mid := len(s) / 2
	for mid > 0 && !utf8.RuneStart(s[mid]) {
		mid--
	}
	return s[:mid], s[mid:]
}

var _ providers.Named = (*LLM)(nil)

// Vendor is "rules" (providers.Named).
func (*LLM) Vendor() string { return "rules" }

// Model is "": the rules are the agent's own (providers.Named).
func (*LLM) Model() string { return "" }
