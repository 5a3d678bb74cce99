// Package trunk decides who may call: the trunk policy of the SIP
// transport, applied to every datagram (and stream chunk) before it is
// parsed, and to every INVITE before it grows a dialog. It is pure Go: no
// sockets, no goroutines, and every rule takes the time as an argument.
//
// # The read filter
//
// Policy.Filter (datagrams) and Policy.FilterStream (stream chunks) are
// called by the SIP layer with the source address and the raw bytes.
// They return a Verdict: Pass, or a drop and its cause. A dropped message
// gets no answer at all. The checks run in this order:
//
//  1. The allowlist (Config.Allow, CIDR prefixes; an IPv4-mapped IPv6
//     source is matched as IPv4, a zone is ignored). This check is first,
//     takes no lock and allocates nothing: a source outside the list
//     costs a prefix scan and a counter, and grows no state.
//  2. The per-source rate limit, like Kamailio's pike: a token bucket per
//     source (Config.Rate messages per second, Config.Burst at once;
//     defaults 20/s and 40). A source that overflows its bucket is
//     blocked (silenced) for Config.BlockFor (default 60 s), and the
//     block is renewed each time it overflows again while blocked, so a
//     source is released BlockFor after it stopped flooding. Only
//     allowed sources have a bucket, in a table bounded by
//     Config.MaxSources (default 10 000; the least recently seen source
//     goes first). An IPv6 source is keyed by its /64, the block a single
//     subscriber is given, so one host cannot dodge its bucket (or flush
//     the table) by walking its own prefix.
//  3. The size bound (Config.MaxMessageBytes, default 16 KiB) of a
//     datagram. A stream chunk is not bounded here: its size says nothing
//     about a message's, and the stream parser bounds each message.
//  4. Known scanner User-Agents (sipvicious' "friendly-scanner", sipcli,
//     sip-scan, VaxSIPUserAgent, ... DefaultScanners, extended by
//     Config.Scanners): the header section of each message is scanned for
//     User-Agent headers (names case-insensitive, folded lines followed),
//     never the body, and a value holding a listed name as a word
//     (case-insensitive) drops the message. The scan allocates nothing
//     and reads at most 1 KiB of User-Agent values per call.
//
// On a stream, every message start in the chunk takes a token (the
// messages are walked by their Content-Length), and a header cut across
// two chunks is not seen as a scanner. A drop on a stream means the SIP
// layer should close the connection: the byte stream cannot be resumed in
// the middle.
//
// A rate of 20 messages per second is about five new calls per second
// from one address (INVITE, ACK, BYE and a retransmission or two): a
// trunk provider's proxy that carries more needs a higher Config.Rate.
//
// # Dialogs
//
// Policy.Acquire counts the open dialogs of a source (keyed like the rate
// limit) against Config.MaxDialogsPerSource (default 100); the release
// function it returns gives the slot back once, however often it is
// called.
//
// # Digest authentication
//
// With Config.Users set, the SIP layer answers an INVITE without
// credentials 401 with Policy.Challenge's WWW-Authenticate value (RFC 3261
// §22, RFC 2617 and RFC 8760: MD5 or SHA-256, qop=auth), and checks the
// retried INVITE's Authorization value with Policy.Verify. Nonces are 16
// random bytes, single use (nc must be 00000001), valid for
// Config.NonceTTL (default 30 s), held in a table of Config.MaxPending
// (default 1024) where the oldest goes when it is full. The response is
// compared in constant time, and an unknown user costs the same hashing
// as a wrong password (a random dummy password is hashed) and gets the
// same answer, ErrAuthFailed. A right digest on an expired or forgotten
// nonce fails with an error that also matches ErrStaleNonce: answer it
// with StaleChallenge, whose stale=true lets the client retry at once.
// The Authorization header is parsed here (quoted strings and escapes,
// duplicates refused, at most MaxAuthorizationBytes).
//
// The digest's uri must be the request's Request-URI exactly as received
// (RFC 2617 §3.2.2.5): a credential signed for one target does not open
// another. sipp signs sip:<remote_ip>:<remote_port> unless it is run
// with -auth_uri (give it the Request-URI without "sip:"); baresip signs
// the Request-URI.
//
// Passwords are strings in Config.Users; the caller reads them from the
// environment. Nothing here logs: a Verdict, an error and Stats carry no
// address, header, user name or digest.
package trunk
