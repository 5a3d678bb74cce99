// Package llmmock is the core the LLM adapters' loopback mock servers
// (openaimock, anthropicmock, geminimock) share: the script of Responses
// with their faults (refusals, stalls, pacing, cut bodies), the
// event-stream writer, the counters and the recorded requests. Each
// vendor's mock gives its routes, headers, error bodies and line framing
// as a Vendor. FaultWire maps the house's one fault vocabulary
// (providertest.Fault) onto a Response, given how the vendor refuses, what
// a broken line of its stream looks like and which line yields an event.
//
// It is test support (a server speaking a wire, named …mock): production
// code does not import it.
package llmmock
