// Package anthropic is the LLM adapter for the Anthropic Messages API: it
// turns a providers.Request into a streaming POST {base}/v1/messages and
// the server-sent events of the answer into providers.LLMEvent values for
// the llm actor's assembler.
//
// It is hand-written on net/http, like package openai: one http.Client and
// Transport per adapter, so Warm leaves a pooled keep-alive connection for
// the next Stream; every line of the event stream is bounded; the three
// deadlines (response headers, first event, gap between events) are one
// timer per stream that cancels the request. Failures map to the typed
// errors of package providers. The API key is read from the environment
// once, in New, sent as x-api-key, and appears in no error and no log.
//
// Mapping of the conversation (Messages API rules: roles alternate, system
// is a top-level field, tool results are user content):
//   - system messages before the first other message form the top-level
//     system prompt; a system message later in the conversation (a
//     late-result note) becomes a user text block "[system note] ...",
//     merged into the adjacent user turn;
//   - consecutive messages of one role are merged into one message;
//   - the tool results of a round are tool_result blocks of ONE user
//     message, before any text of that message;
//   - an assistant message is [its thinking blocks, verbatim from
//     ProviderData; its text; its tool_use blocks];
//   - tool_use ids are the engine's call ids (ToolCall.ID), escaped to the
//     API's id alphabet [A-Za-z0-9_-] (engine ids hold a dot), so tool_use
//     and tool_result agree;
//   - a conversation that opens with the assistant (a greeting) gets the
//     user turn OpeningNote before it: the API wants the user first;
//   - a trailing assistant message (a prefill) is dropped: the engine
//     never means to prefill, and with thinking enabled the API refuses
//     one;
//   - empty text blocks are never sent.
//
// Thinking (Config.ThinkingBudget): thinking text is never spoken. The
// thinking blocks of a response (text and signature, and redacted_thinking
// blocks) are collected and sent as ONE LLMProviderData event, the JSON
// {"thinking":[<blocks>]}, just before LLMDone: once, because the
// assembler refuses a second, different value. The engine stores it on the
// assistant message; the next request puts the blocks back verbatim at the
// start of that message's content.
//
// Subpackage anthropicmock is a server speaking the same wire shapes, with
// fault injection, on a loopback socket or on an in-memory listener for
// testing/synctest; contract_test.go runs the provider contract suite
// (providers/contracttest) over the adapter and the mock in virtual time;
// sim/wholecall runs the tool scenarios S1-S6 over them.
package anthropic
