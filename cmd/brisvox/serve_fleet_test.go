package main

import (
	"strings"
	"testing"
)

// TestFleetFlagsCheck: serve's fleet flags are refused before anything
// starts, each with what to do. Mutations caught: the node name not
// checked (a name with a slash, which would break the operator API's
// /operator/nodes/NAME path, accepted), --seeds without --cluster-addr
// accepted (the node silently alone), a fleet without the operator API
// accepted, the fleet's own Config not validated (an unknown provider
// accepted).
func TestFleetFlagsCheck(t *testing.T) {
	tests := []struct {
		name     string
		flags    fleetFlags
		operator bool
		node     string
		want     string // "" for no error, else a part of it
	}{
		{name: "alone", node: "n1"},
		{name: "alone without the operator API", node: "n1", operator: false},
		{name: "a slash in the name", node: "n1/x", want: "--node"},
		{name: "an empty name", node: "", want: "--node"},
		{name: "a name too long", node: strings.Repeat("a", 64), want: "--node"},
		{name: "seeds alone", flags: fleetFlags{seeds: "127.0.0.1:6330"}, node: "n1", want: "--seeds needs --cluster-addr"},
		{name: "advertise alone", flags: fleetFlags{advertise: "10.0.0.1:7070"}, node: "n1", want: "--cluster-advertise needs --cluster-addr"},
		{name: "a fleet without the operator API", flags: fleetFlags{addr: "127.0.0.1:0", name: "brisvox", provider: "automanaged", seeds: "127.0.0.1:6330", autoPort: 6330}, node: "n1", want: "--operator-token-env"},
		{name: "an unknown provider", flags: fleetFlags{addr: "127.0.0.1:0", name: "brisvox", provider: "consul", autoPort: 6330}, operator: true, node: "n1", want: "consul"},
		{name: "a fleet", flags: fleetFlags{addr: "127.0.0.1:0", name: "brisvox", provider: "automanaged", seeds: "127.0.0.1:6330", autoPort: 6330}, operator: true, node: "n1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.flags.check(tt.operator, tt.node)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("check: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("check: %v, want an error naming %q", err, tt.want)
			}
		})
	}
}
