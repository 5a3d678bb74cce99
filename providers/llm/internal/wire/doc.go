// Package wire holds what the LLM adapters (providers/llm/openai,
// anthropic, gemini) share on the wire: a bounded reader of server-sent
// events and the short, key-free excerpt of an error body that goes into a
// providers.Rejected. (The in-place JSON scanner of their decoders is
// providers/internal/jsonscan.)
package wire
