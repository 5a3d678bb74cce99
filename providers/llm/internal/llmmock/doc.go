// Package llmmock is the core the LLM adapters' loopback mock servers
// (openaimock, anthropicmock, geminimock) share: the script of Responses
// with their faults (refusals, stalls, pacing, cut bodies), the
// event-stream writer, the counters and the recorded requests. Each
// vendor's mock gives its routes, headers, error bodies and line framing
// as a Vendor.
package llmmock
