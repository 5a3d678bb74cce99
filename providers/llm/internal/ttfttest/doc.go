// Package ttfttest measures the time to first token that an LLM adapter
// (providers/llm/openai, anthropic, gemini) adds over its mock, for the
// adapters' BenchmarkTimeToFirstToken: the adapter's Stream up to its first
// LLMText event, against a bare net/http POST of the same body to the same
// mock read up to the data line that carries that text. The difference is
// the adapter's own cost (request building, its transport, SSE reading,
// decoding); the budget is 1 ms.
package ttfttest
