// Package httpx is the HTTP plumbing every HTTP provider adapter shares
// (the LLM adapters through providers/llm/internal/httpllm, the speech
// adapter of providers/tts/openaispeech): the client and transport (no
// compression, no redirects, a bounded dial, a DialContext hook for
// in-memory listeners), the key read from the environment, and the
// short, key-free excerpt of an error body that goes into a
// providers.Rejected.
//
// What is read from a response (events, audio) and its deadlines stay
// with the adapters.
package httpx
