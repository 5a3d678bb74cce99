// Package gate is the door of the media endpoints: the HTTP middleware
// `brisvox serve` wraps around the transports' handlers (/pcm, /twilio,
// /webrtc/offer, the WebRTC page) so that a caller is rate-limited and
// authenticated before any upgrade, media set-up or admission slot, and
// a stranger who can reach the port cannot spend the agent's provider
// money.
//
// # Authentication
//
// A request passes with either credential the Config enables:
//
//   - a bearer token, "Authorization: Bearer <token>", compared in
//     constant time (the SHA-256 digests of both are compared, so not
//     even the length leaks);
//   - a signed URL, for clients that cannot set a header (a browser's
//     websocket): the query carries exp (unix seconds) and sig, the
//     unpadded base64url HMAC-SHA256 under the secret of the canonical
//     string of the method, the path, exp and the other query parameters
//     (see Sign). A URL is refused once exp has passed, and when exp lies
//     more than MaxTTL ahead (a URL signed for ever is not accepted).
//
// No credential answers 401 with "WWW-Authenticate: Bearer"; a wrong
// token, a bad or malformed signature, or a URL signed too far ahead
// 403; an expired URL 403 with the cause "expired". With neither
// credential configured the gate only rate-limits (the keyless agent on
// loopback; Protected reports it).
//
// # Rate limit
//
// Each source has a token bucket (RatePerSec, Burst). The source is the
// peer address of the connection, r.RemoteAddr, never X-Forwarded-For
// (anyone can write that header); an IPv6 source is its /64, the block
// one host is usually given, so a host cannot escape its bucket by
// changing addresses within it. The table of buckets is bounded
// (MaxSources): a new source past the bound takes the slot of the source
// seen least recently, so a flood of addresses costs a fixed amount of
// memory. The limit is checked before the credentials, so guessing them
// is rate-limited too. A refusal answers 429 with Retry-After (whole
// seconds, at least 1) and {"error":...,"cause":"rate_limited"}. Allow
// is the same limiter for callers that are not HTTP handlers.
//
// # Refusals
//
// Every refusal is counted (Stats) and goes to an internal/ratelog
// tally: one line at once, then one summary per interval with counts by
// cause; never a line per request. No token, signature, query or
// address is ever logged.
package gate
