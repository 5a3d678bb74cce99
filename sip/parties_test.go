package sip_test

import (
	"context"
	"testing"
	"time"
)

// TestInboundParties: an inbound call's parties are the user parts of
// the INVITE's From and To URIs as received, through sipp on real
// sockets: a number in a sip: URI, a tel: URI's number without its
// parameters, a URI without a user part (""), and a user part with a
// password, which is never kept (the parser holds it apart). Mutations
// caught (seen failing): From and To swapped (every case), the tel: URI's
// raw part kept whole ("tel": its phone-context), and the parties not set
// in newCall (every case: "").
func TestInboundParties(t *testing.T) {
	cases := []struct {
		name           string
		from, to       string
		caller, callee string
	}{
		{"numbers", "sip:+441632960001@127.0.0.2", "sip:+441632960999@127.0.0.1", "+441632960001", "+441632960999"},
		{"tel", "tel:+441632960001;phone-context=example.com", "sip:0800123@127.0.0.1", "+441632960001", "0800123"},
		{"no user", "sip:127.0.0.2", "sip:agent@127.0.0.1", "", "agent"},
		{"password", "sip:alice:secret@127.0.0.2", "sips:bob@127.0.0.1", "alice", "bob"},
	}
	r := newRig(t, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			run := r.startSipp(ctx, "testdata/sipp/parties.xml", "-key", "from_uri", c.from, "-key", "to_uri", c.to)
			call := r.call()
			caller, callee := call.Parties()
			_, _, _ = frames(ctx, call)
			_ = call.Close()
			<-run.done
			if run.err != nil {
				t.Fatalf("sipp: %v\n%s", run.err, run.out)
			}
			if caller != c.caller || callee != c.callee {
				t.Errorf("Parties() = %q, %q; want %q, %q", caller, callee, c.caller, c.callee)
			}
			if _, _, ok := call.Trunk(); ok || call.TrunkName() != "" {
				t.Error("an inbound call names a trunk")
			}
		})
	}
}
