// Package pipetest (test support) is an in-memory network for the providers' mock servers:
// a net.Listener whose DialContext makes a net.Pipe pair. It blocks only
// on channels, so a client and a mock server can talk inside a
// testing/synctest bubble (where real sockets do not work), in virtual
// time.
package pipetest
