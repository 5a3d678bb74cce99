// Package llmtest is the test support the LLM adapters' tests share
// (providers/llm/openai, anthropic, gemini): a vendor's mock started on an
// in-memory pipe and an adapter dialing it (Piped and Open for a test,
// PipedLLM for sim.ToolCasesOver); a stream read to its end and assembled
// as the llm actor does (Collect, Run, Assemble); the checks whose body is
// the same for every adapter, given the adapter and its mock already
// scripted (CancelStopsAtOnce, TimeoutPhases, NoGoroutineLeak,
// WarmReusesConnection, WarmThenRefused, EndsTyped, RecvAllocs,
// BenchRecv); and the provider contract suite's harness over a vendor's
// mock (Harness).
//
// What differs between the vendors stays in each adapter's tests: the
// mock's script in the vendor's wire format, the adapter's Config, the
// line of the wire at which a fault acts.
//
// Only tests import this package. It imports neither sim nor any adapter:
// like every package under providers/ it may not import sim (the
// production-without-sim rule of internal/archtest), so Harness takes the
// suite's response and fault types as type parameters.
package llmtest
