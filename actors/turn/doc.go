// Package turn is where epochs begin. The turn actor follows the caller's
// speech marks and transcripts, decides when the caller's turn is over and
// hands the utterance to the llm actor under a new epoch, and when the caller
// speaks while the bot is busy (thinking or talking) it interrupts: it sends
// Interrupt{new epoch} to the pacer, tts and llm, in that order, so that the
// pacer has settled what was heard before the llm asks.
package turn
