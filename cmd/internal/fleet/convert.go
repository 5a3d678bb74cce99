package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/fleet/operatorpb"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/messages"
)

// The operator's types to their protobuf messages and back: what one
// node sends is what the other's operator API shows, field for field.

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

func summaryPB(c serve.CallSummary) *operatorpb.CallSummary {
	return &operatorpb.CallSummary{
		Id: string(c.ID), Node: c.Node, Transport: c.Transport, Agent: c.Agent, State: c.State,
		StartedUnixNano: unixNano(c.Started), AgeMs: c.AgeMS, Turns: int32(c.Turns),
		LastTurnMs: c.LastTurnMS, Restarts: int32(c.Restarts),
	}
}

func summaryOf(p *operatorpb.CallSummary) serve.CallSummary {
	return serve.CallSummary{
		ID: messages.CallID(p.GetId()), Node: p.GetNode(), Transport: p.GetTransport(), Agent: p.GetAgent(),
		State: p.GetState(), Started: timeOf(p.GetStartedUnixNano()), AgeMS: p.GetAgeMs(),
		Turns: int(p.GetTurns()), LastTurnMS: p.LastTurnMs, Restarts: int(p.GetRestarts()),
	}
}

func callListPB(n serve.NodeInfo, calls []serve.CallSummary) *operatorpb.CallList {
	out := &operatorpb.CallList{Node: nodePB(n), Calls: make([]*operatorpb.CallSummary, len(calls))}
	for i, c := range calls {
		out.Calls[i] = summaryPB(c)
	}
	return out
}

func nodePB(n serve.NodeInfo) *operatorpb.NodeInfo {
	p := &operatorpb.NodeInfo{
		Node: n.Node, LiveCalls: int32(n.LiveCalls), MaxCalls: int32(n.MaxCalls),
		Draining: n.Draining, UptimeMs: n.UptimeMS,
	}
	if d := n.Drain; d != nil {
		p.Drain = &operatorpb.Drain{By: d.By, StartedUnixNano: unixNano(d.Started), LiveAtStart: int32(d.LiveAtStart)}
	}
	if a := n.Admission; a != nil {
		p.Admission = &operatorpb.Admission{
			Load: a.Load, BaselineCores: a.Baseline, PerCallCores: a.PerCall, MeasuredPerCallCores: a.Measured,
			Samples: int32(a.Samples), Cores: a.Cores, Ceiling: a.Ceiling, MachineBusy: a.Machine,
			StarvedSamples: int32(a.Starved),
		}
	}
	return p
}

// nodeOf is a node's entry as its operator API shows it. serve's drain
// and admission parts are of its own types, made from their JSON (the
// operator API's form of them, which these fields name).
func nodeOf(p *operatorpb.NodeInfo) (serve.NodeInfo, error) {
	n := serve.NodeInfo{
		Node: p.GetNode(), LiveCalls: int(p.GetLiveCalls()), MaxCalls: int(p.GetMaxCalls()),
		Draining: p.GetDraining(), UptimeMS: p.GetUptimeMs(),
	}
	parts := map[string]any{}
	if d := p.GetDrain(); d != nil {
		parts["drain"] = map[string]any{"by": d.GetBy(), "started": timeOf(d.GetStartedUnixNano()), "live_at_start": d.GetLiveAtStart()}
	}
	if a := p.GetAdmission(); a != nil {
		parts["admission"] = map[string]any{
			"load": a.GetLoad(), "baseline_cores": a.GetBaselineCores(), "per_call_cores": a.GetPerCallCores(),
			"measured_per_call_cores": a.GetMeasuredPerCallCores(), "samples": a.GetSamples(), "cores": a.GetCores(),
			"ceiling": a.GetCeiling(), "machine_busy": a.GetMachineBusy(), "starved_samples": a.GetStarvedSamples(),
		}
	}
	if len(parts) == 0 {
		return n, nil
	}
	b, err := json.Marshal(parts)
	if err == nil {
		err = json.Unmarshal(b, &n)
	}
	if err != nil {
		return serve.NodeInfo{}, fmt.Errorf("fleet: node %s's entry: %w", p.GetNode(), err)
	}
	return n, nil
}

func descriptionPB(d *messages.Description) *operatorpb.Description {
	if d == nil {
		return nil
	}
	p := &operatorpb.Description{
		Name: d.Name, State: d.State, Counters: d.Counters, Info: d.Info,
		Mailbox: int32(d.Mailbox), Restarts: int32(d.Restarts),
	}
	if len(d.Children) > 0 {
		p.Children = make([]*operatorpb.Description, len(d.Children))
		for i, c := range d.Children {
			p.Children[i] = descriptionPB(c)
		}
	}
	return p
}

func descriptionOf(p *operatorpb.Description) *messages.Description {
	if p == nil {
		return nil
	}
	d := &messages.Description{
		Name: p.GetName(), State: p.GetState(), Counters: p.GetCounters(), Info: p.GetInfo(),
		Mailbox: int(p.GetMailbox()), Restarts: int(p.GetRestarts()),
	}
	if len(p.GetChildren()) > 0 {
		d.Children = make([]*messages.Description, len(p.GetChildren()))
		for i, c := range p.GetChildren() {
			d.Children[i] = descriptionOf(c)
		}
	}
	return d
}

func detailPB(d serve.CallDetail) *operatorpb.CallDetail {
	p := &operatorpb.CallDetail{Call: summaryPB(d.Call), Tree: descriptionPB(d.Tree), Turns: make([]*operatorpb.TurnTimeline, len(d.Turns))}
	for i, t := range d.Turns {
		p.Turns[i] = &operatorpb.TurnTimeline{Epoch: t.Epoch, AtUnixNano: unixNano(t.At), MarksMs: t.MarksMS}
	}
	return p
}

func detailOf(p *operatorpb.CallDetail) serve.CallDetail {
	d := serve.CallDetail{Call: summaryOf(p.GetCall()), Tree: descriptionOf(p.GetTree()), Turns: make([]serve.TurnTimeline, len(p.GetTurns()))}
	for i, t := range p.GetTurns() {
		marks := t.GetMarksMs()
		if marks == nil {
			marks = map[string]float64{}
		}
		d.Turns[i] = serve.TurnTimeline{Epoch: t.GetEpoch(), At: timeOf(t.GetAtUnixNano()), MarksMS: marks}
	}
	return d
}

// codes are serve's errors as the operator's messages carry them.
var codes = []struct {
	code operatorpb.Code
	err  error
}{
	{operatorpb.Code_CODE_UNKNOWN_CALL, serve.ErrUnknownCall},
	{operatorpb.Code_CODE_UNKNOWN_NODE, serve.ErrUnknownNode},
	{operatorpb.Code_CODE_UNKNOWN_STAGE, serve.ErrUnknownStage},
	{operatorpb.Code_CODE_REFUSED, serve.ErrRefused},
	{operatorpb.Code_CODE_NO_RECORDING, serve.ErrNoRecording},
}

// errorPB is a serve error as an answer: its code, and its text without
// the sentinel's own (errorOf puts it back).
func errorPB(err error) *operatorpb.Error {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return &operatorpb.Error{Code: c.code, Text: strings.TrimPrefix(err.Error(), c.err.Error()+": ")}
		}
	}
	return &operatorpb.Error{Code: operatorpb.Code_CODE_INTERNAL, Text: err.Error()}
}

// errorOf is node's error answer as serve's error.
func errorOf(node string, p *operatorpb.Error) error {
	for _, c := range codes {
		if p.GetCode() == c.code {
			return fmt.Errorf("%w: %s (on %s)", c.err, p.GetText(), node)
		}
	}
	return fmt.Errorf("%w: %s: %s", ErrRemote, node, p.GetText())
}
