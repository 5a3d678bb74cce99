// Package register keeps one SIP registration alive: the binding of our
// Contact to an address of record at a carrier's registrar (RFC 3261
// section 10), for trunks that send calls only to registered endpoints.
//
// A Client runs one goroutine (Run, stopped and waited by Close). It
// sends REGISTER through a Sender (signal.Server.Request: the request
// leaves from our listener, so the registrar sees the address it will
// send calls to), answers a 401 or 407 digest challenge (icholy/digest,
// as sipgo's client does) at most Config.MaxAuthAttempts times in a row,
// and keeps the binding for the expiry the registrar granted (the
// expires parameter of our Contact in the 200, else its Expires header,
// else what we asked). It registers again Margin before the binding
// ends: min(expiry/2, Config.Margin), default Margin 30 s, which leaves
// room for a REGISTER whose first datagrams are lost (UDP retransmits at
// 0.5, 1, 2, 4 s...) while never refreshing more often than half the
// granted time. A 423 Interval Too Brief is answered at once with its
// Min-Expires. A 5xx, a timeout or a vanished registrar puts the client
// in "retrying" with exponential backoff (BackoffMin doubled per failure
// up to BackoffMax, minus a seeded random share Jitter); a refused
// authentication (the challenge comes back however we answer it, or we
// have no credentials) is state "failed" and backs off the same way, so
// a trunk that answers 401 forever costs a bounded number of requests.
// Close sends REGISTER with Expires: 0 (waiting at most
// UnregisterTimeout) when a binding may be live, and ends "unregistered".
//
// Every REGISTER of a Client has the same Call-ID and From tag and a
// CSeq one higher than the last (RFC 3261 10.2). An outbound proxy is
// the first Route (with lr), the configured Route set follows.
//
// Logs carry fixed words, the trunk name, the state and the status code:
// never the user, the URI or the password.
package register
