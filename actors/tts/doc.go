// Package tts is the call's speech-synthesis stage: one provider session,
// one provider context per epoch. Text of the current epoch is pushed as it
// streams; an interrupt cancels the older contexts at once; audio and word
// timings go on to the pacer tagged with their epoch, and TTSEnded closes an
// epoch even when synthesis failed, so the pacer can settle what was heard.
// A provider failure is a panic of this actor: the session restarts it with
// a new provider session after a backoff. A restart fails every epoch the
// stage held: the one it was speaking, those queued while it connected, and
// the epoch of the text message it failed on, which its own receiver
// middleware records ahead of any work (a panic may come before Receive, or
// before the message made its epoch current). The pacer settles each from
// TTSEnded's error, and the restarted stage speaks nothing more of them, so
// an answer never plays with a lost delta missing while the context counts
// its words from the start.
package tts
