package sip

import "testing"

// TestURIUser: a caller id's user part, without its password; "" for a
// URI without one or what is not a sip: URI. (Mutations seen failing: the
// password kept, the scheme matched case-sensitively.)
func TestURIUser(t *testing.T) {
	cases := []struct{ uri, want string }{
		{"sip:+15550000@trunk.example.com", "+15550000"},
		{"SIPS:alice@example.com:5061", "alice"},
		{"sip:alice:secret@example.com", "alice"},
		{"sip:example.com", ""},
		{"sip:", ""},
		{"+15550000", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := uriUser(c.uri); got != c.want {
			t.Errorf("uriUser(%q) = %q, want %q", c.uri, got, c.want)
		}
	}
}
