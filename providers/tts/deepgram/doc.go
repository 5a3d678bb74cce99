// Package aura is the Deepgram Aura streaming TTS adapter
// (providers.TTS) over the service's websocket, /v1/speak with the model,
// encoding=linear16 and the sample rate in the query and the key in an
// Authorization: Token header. Text goes out as Speak messages; Flush
// asks the service to speak what it holds and is answered by Flushed
// after the audio; Clear drops what it holds and is answered by Cleared.
// Audio comes back as binary PCM16 frames without a context label.
//
// The service speaks one stream at a time and reports no word times
// (the adapter emits no TTSWord events). Contexts therefore take turns on
// the wire: the first context opened is sent at once, a later one is
// held in the session until the one before it is Flushed or cancelled,
// so every frame belongs to the context on the wire. Cancel clears that
// context (Clear), acknowledges at once and drops what arrives until
// Cleared; the next context goes out after it.
//
// FlushPolicy says when the service is asked to speak: PerTurn (the
// default) flushes once per context, at Flush, so the service sees whole
// sentences; PerText flushes after every Push, for the first audio
// sooner. Under PerTurn a pushed text owes no answer until its Flush, so
// while unflushed text sits on the server and nothing is owed, the
// session probes the connection with websocket pings: a server that
// answers no ping within ReplyTimeout ends the session with a Timeout, a
// live one lets a slow LLM take its time.
package aura
