// Package wire holds what the LLM adapters (providers/llm/openai,
// anthropic, gemini) share on the wire: a bounded reader of server-sent
// events, and a JSON Scanner that reads a streamed chunk in place (the
// adapters' per-delta decoders walk it and allocate only the text they
// keep). The key-free excerpt of an error body is providers/internal/httpx's.
package wire
