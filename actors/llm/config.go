package llm

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// DefaultFillerDelay is the fixed filler delay.
const DefaultFillerDelay = 1200 * time.Millisecond

// Config tunes the llm actor.
type Config struct {
	// System is the system prompt; empty for none.
	System string
	// Tools are offered to the model in every request. WithDefaults puts
	// them in name order (a sorted copy; the caller's slice is left
	// alone), so every request of a call offers them byte-identically and
	// the vendors' prompt caches hold.
	Tools []providers.ToolDef
	// MaxRounds bounds the requests of one turn (tool loop); default 6.
	MaxRounds int
	// RoundTimeout bounds one request from send to its last event; a round
	// that is stuck is stopped there and the fallback line is spoken.
	// Default 15 s.
	RoundTimeout time.Duration
	// FallbackLine is spoken when a round fails.
	FallbackLine string
	// FillerAfter is how long a round's tools may run before a filler
	// phrase is spoken; default 1.2 s, negative turns fillers off. One
	// delay for every tool: the caller hears the same silence whatever
	// runs, and a lookup that answers within a second speaks no filler
	// that its answer would cut off.
	FillerAfter time.Duration
	// FillerPerTool takes each tool's own delay (ToolFillers) instead; a
	// round with several calls fills after the smallest. It cannot be
	// combined with FillerAfter (one of the two would be ignored).
	FillerPerTool bool
	// Fillers are the phrases, used in turn (round-robin per call; only a
	// phrase that was spoken moves the rotation on).
	Fillers []string
	// ToolFillers is each tool's Spec.FillerAfter. A negative one opted
	// out: a round whose calls all opted out stays silent while they run
	// (end_call, send_dtmf: a phrase would be cut off or played into a
	// phone menu). Under a fixed delay only the sign counts; a tool not
	// listed gets the default, agent.DefaultFillerAfter.
	ToolFillers map[string]time.Duration
	// Clips tells which phrases have a pre-rendered clip (the tts stage
	// plays those); nil for none. It only feeds the filler_clips counter.
	Clips interface{ Has(text string) bool }
	// Window bounds every request's estimated size (agent.Window): the
	// prompt and the current turn are kept, older exchanges are left out
	// oldest first, and a long tool loop's older results are compacted.
	// The context itself keeps everything. The zero value takes
	// agent.DefaultWindowTokens; a negative MaxTokens turns it off.
	Window agent.WindowConfig
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.MaxRounds == 0 {
		c.MaxRounds = 6
	}
	if c.RoundTimeout == 0 {
		c.RoundTimeout = 15 * time.Second
	}
	if c.FillerAfter == 0 && !c.FillerPerTool {
		c.FillerAfter = DefaultFillerDelay
	}
	if len(c.Fillers) == 0 {
		c.Fillers = []string{"One moment, please.", "Let me check that.", "Just a second."}
	}
	if !slices.IsSortedFunc(c.Tools, byName) {
		c.Tools = slices.Clone(c.Tools)
		slices.SortStableFunc(c.Tools, byName)
	}
	if c.FallbackLine == "" {
		c.FallbackLine = "Sorry, something went wrong on my side. Could you say that again?"
	}
	return c
}

// Validate checks the config (after defaults).
func (c Config) Validate() error {
	if c.MaxRounds < 1 {
		return fmt.Errorf("%w: max rounds %d", ErrInvalidConfig, c.MaxRounds)
	}
	if c.RoundTimeout < 0 {
		return fmt.Errorf("%w: negative round timeout", ErrInvalidConfig)
	}
	if c.FillerPerTool && c.FillerAfter != 0 {
		return fmt.Errorf("%w: per-tool filler delays and a fixed filler delay together", ErrInvalidConfig)
	}
	if err := c.Window.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// byName orders tools by name.
func byName(a, b providers.ToolDef) int { return strings.Compare(a.Name, b.Name) }
