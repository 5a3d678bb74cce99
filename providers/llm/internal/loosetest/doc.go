// Package loosetest holds the loose assertions the LLM adapters (providers/llm/
// openai, anthropic, gemini) are held to by a real model: a short
// conversation whose checks hold whatever the model chooses to say. The
// live tests (BRISVOX_LIVE_TESTS=1 with a key) run it against the real
// services; the normal suite runs the same function against each adapter's
// scripted mock, so the checks themselves are exercised on every run.
//
// Run is the whole check: Warm succeeds; a plain question ends with
// LLMDone then io.EOF and non-empty valid UTF-8 text; a question that
// needs a tool gets well-formed calls (they assemble, with offered names
// and JSON-object arguments), and the follow-up with the results ends
// cleanly with text; cancelling after the first event makes Recv return
// the context's error at once and leaves no goroutine. Every step has its
// own deadline. A Report holds counts and errors only: never the model's
// text, never tool arguments.
package loosetest
