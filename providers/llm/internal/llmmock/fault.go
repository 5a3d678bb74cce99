package llmmock

import "github.com/brisvox/brisvox/providers/providertest"

// FaultWire says how one vendor's event stream shows the faults of the
// house's one fault vocabulary (providertest.Fault): the vendor's refusal
// body, the start of a data line cut in its middle, and which data line
// yields an event.
type FaultWire struct {
	// RefuseBody is the vendor's error body sent with status.
	RefuseBody func(status int) string
	// Broken is the start of a data line cut in its middle: a protocol
	// violation is this line, then the body ends without its trailer.
	Broken string
	// LineOf is the index of the line of lines that yields event k of the
	// adapter (k is at least 0; len(lines) is past the last line). Nil:
	// line k, at most len(lines).
	LineOf func(lines []string, k int) int
}

// Apply returns r with f applied, acting before the line that yields
// event f.BeforeEvent (a negative one as 0): FaultReject answers with
// f.Status and the vendor's body and nothing else, FaultConnectStall
// holds the response headers, FaultStall and FaultDelay hold the stream
// before that line (for f.Duration; 0: until the client goes away),
// FaultDisconnect cuts the body there, FaultProtocol sends Broken there and
// cuts. The zero Kind (no fault) returns r as it is.
func (w FaultWire) Apply(r Response, f providertest.Fault) Response {
	ls := r.Lines
	k := max(f.BeforeEvent, 0)
	before := min(k, len(ls))
	if w.LineOf != nil {
		before = w.LineOf(ls, k)
	}
	switch f.Kind {
	case providertest.FaultReject:
		r = Response{Status: f.Status, ErrorBody: w.RefuseBody(f.Status)}
	case providertest.FaultConnectStall:
		r.StallHeaders, r.StallFor = true, f.Duration
	case providertest.FaultStall, providertest.FaultDelay:
		r.Stall, r.StallBefore, r.StallFor = true, before, f.Duration
	case providertest.FaultDisconnect:
		r.Lines, r.Cut = ls[:before], true
	case providertest.FaultProtocol:
		r.Lines, r.Cut = append(ls[:before:before], w.Broken), true
	}
	return r
}
