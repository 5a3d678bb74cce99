// Package carriertest is the test support of the carrier transports: it
// serves a handler on an in-memory listener (net.Pipe connections, which
// work inside a testing/synctest bubble) or on a real loopback socket,
// with a websocket client dialer for each; a websocket client written by
// hand (RawClient) for clients that stop reading or answering pings; a
// counting reservation with the server's admission contract (Admitter);
// a burst dialer behind one start barrier; and a strict check of JSON
// log lines (no key twice). Test code only.
package carriertest
