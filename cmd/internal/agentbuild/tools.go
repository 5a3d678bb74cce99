package agentbuild

import (
	"fmt"
	"sort"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/stock"
)

// catalogue makes the tools an agent file may enable, for one call.
type catalogue struct {
	notes    *stock.NoteStore
	bookings *stock.BookingStore
}

func newCatalogue() *catalogue {
	return &catalogue{notes: stock.NewNoteStore(), bookings: stock.NewBookingStore()}
}

// makers are the tools by name; ender is the call's (for end_call).
func (c *catalogue) makers(ender stock.Ender) map[string]func() agent.Tool {
	return map[string]func() agent.Tool{
		stock.GetTimeTool: func() agent.Tool { return stock.GetTime(stock.ClockFunc(time.Now)) },
		"save_note":       func() agent.Tool { return stock.SaveNote(c.notes) },
		"book_table":      func() agent.Tool { return stock.BookTable(c.bookings) },
		agent.EndCallTool: func() agent.Tool { return stock.EndCall(ender) },
	}
}

// ToolNames is the catalogue, sorted: what `brisvox check` checks
// tools.enabled against.
func ToolNames() []string {
	m := newCatalogue().makers(nil)
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// confirmed is a tool whose confirmation the agent file turned on.
type confirmed struct {
	agent.Tool
	spec agent.Spec
}

func (c confirmed) Spec() agent.Spec { return c.spec }

// registry makes a call's registry of the enabled tools. A tool listed in
// confirm gets Spec.Confirm; a tool that asks for confirmation itself
// keeps it (the file cannot turn a tool's own gate off).
func (c *catalogue) registry(enabled []string, confirm func(string) bool, ender stock.Ender) (*agent.Registry, error) {
	makers := c.makers(ender)
	var ts []agent.Tool
	for _, name := range enabled {
		mk, ok := makers[name]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownTool, name)
		}
		t := mk()
		if confirm(name) && !t.Spec().Confirm {
			s := t.Spec()
			s.Confirm = true
			t = confirmed{Tool: t, spec: s}
		}
		ts = append(ts, t)
	}
	return agent.NewRegistry(ts...)
}
