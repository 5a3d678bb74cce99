package llmmock

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers/providertest"
)

// Every kind of the fault vocabulary lands on the mock's answer, before the
// line that yields the event: a refusal replaces the answer with the
// vendor's body for the status, a connect stall holds the headers, a stall
// and a delay hold the stream before the line, a disconnect cuts the body
// there, a protocol violation sends the broken line there and cuts; LineOf
// picks the line. Mutations caught: a refusal that keeps the lines or the
// pace, the status not passed to RefuseBody, a stall at the event's index
// instead of LineOf's line, BeforeEvent not clamped at 0 or not bounded by
// the lines, a disconnect without the cut, the broken line after the cut
// point, the script's lines changed in place by the violation.
func TestFaultWireApply(t *testing.T) {
	lines := []string{"a", "b", "c"}
	base := Response{Lines: lines, Pace: time.Second}
	plain := FaultWire{RefuseBody: func(status int) string { return "refused " + strconv.Itoa(status) }, Broken: `{"x":`}
	shifted := plain
	shifted.LineOf = func(ls []string, k int) int { return min(k+1, len(ls)) }
	for _, tc := range []struct {
		name string
		w    FaultWire
		f    providertest.Fault
		want Response
	}{
		{"none", plain, providertest.Fault{BeforeEvent: 1}, base},
		{"reject", plain, providertest.Fault{Kind: providertest.FaultReject, Status: 429},
			Response{Status: 429, ErrorBody: "refused 429"}},
		{"connect_stall", plain, providertest.Fault{Kind: providertest.FaultConnectStall, Duration: 2 * time.Second},
			Response{Lines: lines, Pace: time.Second, StallHeaders: true, StallFor: 2 * time.Second}},
		{"stall", plain, providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1},
			Response{Lines: lines, Pace: time.Second, Stall: true, StallBefore: 1}},
		{"stall_at_line_of", shifted, providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1},
			Response{Lines: lines, Pace: time.Second, Stall: true, StallBefore: 2}},
		{"delay", plain, providertest.Fault{Kind: providertest.FaultDelay, BeforeEvent: -3, Duration: time.Second},
			Response{Lines: lines, Pace: time.Second, Stall: true, StallBefore: 0, StallFor: time.Second}},
		{"stall_past_the_end", plain, providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 9},
			Response{Lines: lines, Pace: time.Second, Stall: true, StallBefore: 3}},
		{"disconnect", plain, providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 2},
			Response{Lines: lines[:2], Pace: time.Second, Cut: true}},
		{"protocol", plain, providertest.Fault{Kind: providertest.FaultProtocol, BeforeEvent: 1},
			Response{Lines: []string{"a", `{"x":`}, Pace: time.Second, Cut: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.w.Apply(base, tc.f); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Apply(%+v) = %+v, want %+v", tc.f, got, tc.want)
			}
			if !reflect.DeepEqual(lines, []string{"a", "b", "c"}) {
				t.Fatalf("the script's lines changed: %q", lines)
			}
		})
	}
}
