// Package openai is the LLM adapter for the Chat Completions API and the
// services that speak it (OpenAI, OpenRouter, Ollama, vLLM): it turns a
// providers.Request into a streaming POST {base}/chat/completions and the
// server-sent events of the answer into providers.LLMEvent values for the
// llm actor's assembler.
//
// It is hand-written on net/http: one http.Client and Transport per
// adapter, so Warm leaves a pooled keep-alive connection for the next
// Stream; every line of the event stream is bounded; the three deadlines
// (response headers, first event, gap between events) are one timer per
// stream that cancels the request. Failures map to the typed errors of
// package providers. The API key is read from the environment once, in New,
// and appears in no error and no log.
//
// Subpackage openaimock is a loopback (or in-memory, for testing/synctest)
// server speaking the same wire shapes, with fault injection, for tests;
// contract_test.go runs the provider contract suite (providers/contracttest)
// over the adapter and the mock in virtual time; sim/wholecall runs the
// tool scenarios S1-S6 over them.
package openai
