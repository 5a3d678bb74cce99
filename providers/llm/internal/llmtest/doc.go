// Package llmtest is the test support the LLM adapters' tests share
// (providers/llm/openai, anthropic, gemini): a vendor's mock started on an
// in-memory pipe and an adapter dialing it (Piped and Open); a stream read
// to its end and assembled as the llm actor does (Collect, Run, Assemble);
// the checks whose body is the same for every adapter, given the adapter
// and its mock already scripted (CancelStopsAtOnce, TimeoutPhases,
// NoGoroutineLeak, WarmReusesConnection, WarmThenRefused, EndsTyped,
// RecvAllocs, BenchRecv); and the provider contract suite's harness over a
// vendor's mock (Harness).
//
// What differs between the vendors stays in each adapter's tests: the
// mock's script in the vendor's wire format, the adapter's Config, the
// line of the wire at which a fault acts.
//
// Only tests import this package (it is test support by its name and
// imports testing). It imports the conformance suite (contracttest) and
// the fault vocabulary (providertest), neither sim nor any adapter nor
// anything of the runtime.
package llmtest
