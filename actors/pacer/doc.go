// Package pacer plays the bot's audio out in real time: it cuts the TTS
// audio of the current epoch into 20 ms frames, releases one frame per frame
// period to the transport (the first at once), and feeds the playout book
// (book.go, a pure type): which words of the epoch started playing and
// what the marks confirmed. On an interrupt it clears its queue and the
// transport's and settles what was heard, which the llm actor then asks
// for (HeardQuery); at an end it decides itself (played out, overlapped,
// restarted) it pushes Heard to the llm actor; it reports PlayoutDone to
// the turn actor at every end.
package pacer
