// Package mockloop is the session loop that the TTS mocks built on
// wsmock (cartesiamock, auramock) share: a vendor session that queues its
// answers and sends them one by one, paced like a real-time synthesizer
// or as fast as the connection takes them, while it goes on reading the
// client (a goroutine hands the client's messages over), so a cancel or a
// clear read meanwhile stops what is still queued. The mock says how to
// handle a message, whether one is queued, the pace and how to send the
// next; Serve owns the goroutine and the timer and returns only when both
// are done with.
//
// It is test support: production code does not import it.
package mockloop
