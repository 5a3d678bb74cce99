// Package gemini is the LLM adapter for the Gemini API: it turns a
// providers.Request into a streaming POST
// {base}/v1beta/models/{model}:streamGenerateContent?alt=sse and the
// server-sent events of the answer (each a GenerateContentResponse) into
// providers.LLMEvent values for the llm actor's assembler.
//
// It is hand-written on net/http, like packages openai and anthropic: one
// http.Client and Transport per adapter, so Warm (a GET of the model list)
// leaves a pooled keep-alive connection for the next Stream; every line of
// the event stream is bounded; the three deadlines (response headers,
// first event, gap between events) are one timer per stream that cancels
// the request. Failures map to the typed errors of package providers. The
// API key is read from the environment once, in New (GEMINI_API_KEY, or
// the variable Config.APIKeyEnv names), sent as x-goog-api-key, and
// appears in no error and no log.
//
// Mapping of the conversation:
//   - system messages before the first other message form the
//     systemInstruction; a later system message (a late-result note)
//     becomes a user text part "[system note] ...", merged into the
//     adjacent user content;
//   - consecutive messages of one role are merged into one content;
//   - an assistant message is a "model" content: its text part, then one
//     functionCall part per call, with id = the engine call id and args =
//     the call's JSON arguments (an object; {} otherwise);
//   - the tool results of a round are functionResponse parts of ONE user
//     content, before any text of it: {name, id, response: {"result":
//     text}} or {"error": text} for an error result; the name is that of
//     the call with that id earlier in the conversation (a result whose
//     call is no longer there becomes a user note instead);
//   - a conversation that opens with the model (a greeting) gets the user
//     turn OpeningNote before it; a trailing model content (a prefill) is
//     dropped; empty text parts are never sent;
//   - tools are one functionDeclarations list; each parameter schema is
//     sent as it is, as parametersJsonSchema.
//
// Streaming: text parts are LLMText (a part with "thought": true is
// thinking and never spoken); each functionCall part is one complete
// LLMToolCall (Gemini sends a call whole): Index counts the response's
// calls, ID is the call's id, or "gc<index>" when the service gives none.
// finishReason rides on LLMDone ("MAX_TOKENS" is providers.StopLength).
// The body ends the response (there is no [DONE]): at its clean end, after
// a finishReason, come LLMUsage (the last usageMetadata seen, once), the
// provider data, then LLMDone; a body that ends before a finishReason is
// a Disconnected. An error object in the stream is a Rejected with its
// code (a Protocol without a valid one).
//
// Thought signatures (opaque strings the API wants back on the same part):
// a functionCall part's signature is that call's ProviderData (the JSON
// string), put back on the call's part; the text parts' signatures are
// the response's LLMProviderData, {"textSignatures":[...]}, sent once just
// before LLMDone, and the next request puts the last one back on the
// assistant message's text part.
//
// Subpackage geminimock is a server speaking the same wire shapes, with
// fault injection, on a loopback socket or on an in-memory listener for
// testing/synctest; contract_test.go runs the provider contract suite
// (providers/contracttest) over the adapter and the mock in virtual time;
// sim/wholecall runs the tool scenarios S1-S6 over them.
package gemini
