// Package stt is the call's speech-to-text stage: it holds one provider
// session, streams the caller's frames into it, tells it when the VAD marks
// the start of speech (a session that holds a scarce decoder only while
// the caller speaks takes it then), asks for a final when the VAD marks the
// end of speech, and hands transcripts to the turn actor. A
// provider failure is a panic of this actor, so its supervisor (the session)
// restarts it with a new provider session after a backoff; frames that
// arrive meanwhile wait in the mailbox and then in a bounded buffer, so the
// caller's words are not lost.
package stt
