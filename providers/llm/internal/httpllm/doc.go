// Package httpllm is the HTTP and stream core the LLM adapters
// (providers/llm/openai, anthropic, gemini) share: one http.Client and
// Transport per adapter (no compression, no redirects, a bounded dial),
// Warm, the Rejected of a refused request with a key-free excerpt, and
// Stream, one streamed response read as server-sent events with its one
// deadline timer (response headers, first event, gap between events), the
// mapping of transport failures to the typed errors of package providers,
// and release-once.
//
// What differs between the vendors stays with them: the URLs, the
// headers, the request body, and a Decoder that turns one event's data
// into providers events and says where the response ends.
package httpllm
