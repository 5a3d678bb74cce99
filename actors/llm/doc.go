// Package llm owns the call's conversation context and runs one round actor
// per epoch. The round owns the tool loop: it streams the model's answer
// (text goes on to tts as it arrives), assembles tool calls, mints their ids
// from the sequence the llm actor handed it, tells the llm actor what to
// record (one way), has the tools actor run the calls (the answer comes to
// the round) and loops up to a bound of rounds. On an interrupt the llm
// actor stops the round (one waiting for results is closed in order, so
// what it took is recorded), asks the pacer what was heard, and cuts the
// epoch's assistant messages to those words, so the context holds what the
// caller heard and only that.
package llm
