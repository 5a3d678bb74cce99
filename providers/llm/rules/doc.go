// Package rules is a built-in offline "LLM": a small, fixed intent matcher
// that lets the keyless default agent run a whole call (barge-in, fillers,
// the confirmation gate) with no model and no key. It is not a model: it
// knows five intents, English only, and says fixed lines.
//
// It answers from the request alone, never from state of its own, so a
// restarted stage that sends the same request gets the same answer. The
// request's last message decides what it does:
//
//   - the caller's text: the words are normalised (lower case, punctuation
//     gone, number words and digits both read) and matched in this order:
//     a reply to a booking held for confirmation ("yes", "yeah please",
//     "no thanks": yes calls confirm_pending with the held call_id, no says
//     it is cancelled); goodbye ("bye", "goodbye", "that's all", "hang up":
//     a goodbye line and an end_call call in one response); booking ("book
//     a table for four at seven under Sam", "reserve a table": it asks for
//     what is missing, one question at a time, party size, then time, then
//     name, and calls book_table once it has all three); the time ("what
//     time is it", "tell me the time": a get_time call); a greeting
//     ("hello", "hi", "good morning"); anything else gets a short help
//     line. The booking's slots are recovered from the conversation each
//     time by replaying its user turns.
//   - tool results: it answers from them (the time in words, the held
//     booking read back with "Shall I book it?", the booking done or
//     failed, nothing after end_call).
//
// What callers say to it is published for a speech recognizer: Phrases
// are sentences generated from the matcher's own tables (the intents'
// cues, the number words, the times, the party words and name leads, with
// common first names and days), the training text of pocketsphinx's
// domain language model; Examples are one thing to say per intent, for a
// page; ReadBooking is the booking slots it reads from one utterance.
//
// It only calls a tool the request offers; without get_time it says it
// cannot tell the time. get_time gets the first IANA zone name found in
// the system prompt ("Europe/Paris"), else UTC.
//
// It streams like a model, paced by Config.FirstToken and Config.TokenGap
// (zero by default: the whole response is ready at once; a simulation sets
// a model's pace):
// a word per text event, each tool call as a first fragment with its id and
// name and then its JSON arguments in two pieces, an LLMUsage event (words
// counted as tokens: an estimate) and LLMDone. It starts no goroutine: the
// pacing is a timer waited on in Recv.
package rules
