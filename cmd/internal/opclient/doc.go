// Package opclient is a typed client of the operator API that `brisvox
// serve` mounts under /operator/ (docs/OPERATIONS.md): the live calls of
// every node, one call's actor tree and turn timelines, a stage restart,
// a hang-up, the nodes and their drains, and the event stream. The
// `brisvox calls` command is built on it.
//
// It is the operator's side of the wire and imports nothing of the
// engine: its types mirror the API's JSON, and a field the server adds
// later is kept in each answer's JSON (the commands print it with
// --json). Every request carries the bearer token; the token never
// appears in an error, whatever the server answers.
//
// Failures are the sentinels of errors.go, wrapped with what the server
// said: a refused token, an unknown call, node or stage (with the valid
// stages), a refusal in the node's state, a server that could not be
// reached or did not answer in time, and an answer that is not the API's
// (ErrProtocol).
//
// Events reads GET /operator/events, server-sent events, with the small
// parser of sse.go (the server's output is outside input: it is fuzzed,
// with a corpus in testdata/fuzz). A Stream is read on the caller's
// goroutine; the client starts none.
package opclient
