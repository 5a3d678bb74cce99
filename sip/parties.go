package sip

import "strings"

// Parties are the two ends of the call, for the call record (whose
// numbers policy keeps, hashes or drops them): caller and callee are the
// user parts of the INVITE's From and To URIs as received on a call that
// came in (a tel: URI's number; "" when a URI has none), and on a call we
// placed our caller id's user part and the number dialled. They are
// personal data: never log them.
func (c *Call) Parties() (caller, callee string) { return c.caller, c.callee }

// TrunkName names the trunk an outbound call went through, for the call
// record; "" for a call that came in (the trunk filter admits by source
// address and names no trunk).
func (c *Call) TrunkName() string {
	name, _, ok := c.Trunk()
	if !ok {
		return ""
	}
	return name
}

// uriUser is the user part of a sip: or sips: URI we built or were given
// (a caller id), without a password; "" when it has none.
func uriUser(uri string) string {
	rest := uri
	for _, scheme := range []string{"sip:", "sips:"} {
		if len(rest) > len(scheme) && strings.EqualFold(rest[:len(scheme)], scheme) {
			rest = rest[len(scheme):]
			break
		}
	}
	if rest == uri {
		return ""
	}
	user, _, ok := strings.Cut(rest, "@")
	if !ok {
		return ""
	}
	user, _, _ = strings.Cut(user, ":") // a password, RFC 3261 19.1.1
	return user
}
