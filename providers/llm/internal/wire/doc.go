// Package wire holds what the LLM adapters (providers/llm/openai,
// anthropic, gemini) share on the wire: a bounded reader of server-sent
// events. (The in-place JSON scanner of their decoders is
// providers/internal/jsonscan; the key-free excerpt of an error body is
// providers/internal/httpx's.)
package wire
