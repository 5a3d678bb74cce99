package agentbuild

import (
	"fmt"
	"sort"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
)

// line is what the telephony and recording tools reach the call through:
// the serve layer's Server (end_call, transfer_call, send_dtmf,
// pause_recording, resume_recording).
type line interface {
	stock.Ender
	stock.Transferer
	stock.KeyPresser
	stock.RecordingController
}

// catalogue makes the tools an agent file may enable, for one call.
type catalogue struct {
	notes    *stock.NoteStore
	bookings *stock.BookingStore
}

func newCatalogue() *catalogue {
	return &catalogue{notes: stock.NewNoteStore(), bookings: stock.NewBookingStore()}
}

// makers are the tools by name; ln is the call's (for the telephony
// tools), transfer its [tools.transfer_call].
func (c *catalogue) makers(ln line, transfer agentfile.TransferTool) map[string]func() (agent.Tool, error) {
	plain := func(f func() agent.Tool) func() (agent.Tool, error) {
		return func() (agent.Tool, error) { return f(), nil }
	}
	return map[string]func() (agent.Tool, error){
		stock.GetTimeTool:  plain(func() agent.Tool { return stock.GetTime(stock.ClockFunc(time.Now)) }),
		"save_note":        plain(func() agent.Tool { return stock.SaveNote(c.notes) }),
		"book_table":       plain(func() agent.Tool { return stock.BookTable(c.bookings) }),
		agent.EndCallTool:  plain(func() agent.Tool { return stock.EndCall(ln) }),
		agent.SendDTMFTool: plain(func() agent.Tool { return stock.SendDTMF(ln) }),

		stock.PauseRecordingTool:  plain(func() agent.Tool { return stock.PauseRecording(ln) }),
		stock.ResumeRecordingTool: plain(func() agent.Tool { return stock.ResumeRecording(ln) }),

		agent.TransferCallTool: func() (agent.Tool, error) {
			entries := make([]string, len(transfer.Allow))
			for i, e := range transfer.Allow {
				entries[i] = e.V
			}
			allow, err := stock.NewAllowlist(entries)
			if err != nil {
				return nil, err
			}
			return stock.TransferCall(ln, stock.TransferConfig{Allow: allow, NoConfirm: !transfer.Confirm.V, DescribeTargets: transfer.DescribeTargets.V})
		},
	}
}

// ToolNames is the catalogue, sorted: what `brisvox check` checks
// tools.enabled against.
func ToolNames() []string {
	m := newCatalogue().makers(nil, agentfile.TransferTool{})
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

// registry makes a call's registry of the file's enabled tools. A tool
// listed in tools.confirm gets Spec.Confirm; a tool that asks for
// confirmation itself keeps it (the file cannot turn a tool's own gate
// off, except transfer_call's by its own confirm = false).
func (c *catalogue) registry(tools agentfile.Tools, ln line) (*agent.Registry, error) {
	makers := c.makers(ln, tools.TransferCall)
	var ts []agent.Tool
	for _, name := range tools.Names() {
		mk, ok := makers[name]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownTool, name)
		}
		t, err := mk()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if tools.Confirms(name) && !t.Spec().Confirm {
			s := t.Spec()
			s.Confirm = true
			t = confirmed{Tool: t, spec: s}
		}
		ts = append(ts, t)
	}
	return agent.NewRegistry(ts...)
}
