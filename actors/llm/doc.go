// Package llm owns the call's conversation context and runs one round actor
// per epoch. The round streams the model's answer (text goes on to tts as it
// arrives), assembles tool calls, has the tools actor run them and loops up
// to a bound of rounds. On an interrupt the llm actor stops the round, asks
// the pacer what was heard, and cuts the epoch's assistant messages to those
// words, so the context holds what the caller heard and only that.
package llm
