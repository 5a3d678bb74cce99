// Package tts is the call's speech-synthesis stage: one provider session,
// one provider context per epoch. Text of the current epoch is pushed as it
// streams; an interrupt cancels the older contexts at once; audio and word
// timings go on to the pacer tagged with their epoch, and TTSEnded closes an
// epoch even when synthesis failed, so the pacer can settle what was heard.
// A provider failure is a panic of this actor: the session restarts it with
// a new provider session after a backoff.
package tts
