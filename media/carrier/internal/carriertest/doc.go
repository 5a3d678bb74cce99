// Package carriertest serves a carrier handler to the tests of the
// carrier transports: on an in-memory listener (net.Pipe connections,
// which work inside a testing/synctest bubble) or on a real loopback
// socket, with a websocket client dialer for each. Test code only.
package carriertest
