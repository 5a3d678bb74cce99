// Package deepgram is the streaming STT adapter for Deepgram's live
// transcription websocket (GET /v1/listen upgraded, options in the query,
// "Authorization: Token <key>"): the call's PCM16 mono audio goes out as
// binary frames, the Results messages come back as providers.STTEvent
// values (interims, finals, speech_final, from_finalize), and the control
// messages KeepAlive (while no audio flows), Finalize and CloseStream (on
// Close) go out as text frames.
//
// The websocket plumbing is providers/internal/wsconn: a reader and a
// writer goroutine per session, both stopped and waited for by Close; a
// bounded send queue, so SendAudio never blocks (a full queue drops the
// frame, counts it and returns ErrAudioDropped); a reply deadline armed
// while a result is owed, so a silent service is a providers.Timeout and a
// quiet line without audio is not. Failures map to the typed errors of
// package providers. The API key is read from the environment once, in
// New, and appears in no error and no log.
//
// Subpackage deepgrammock is a loopback (or in-memory, for
// testing/synctest) server speaking the same protocol, with scripted
// transcripts and fault injection, for tests and the contract suite.
package deepgram
