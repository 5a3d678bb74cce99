// Package pacer plays the bot's audio out in real time: it cuts the TTS
// audio of the current epoch into 20 ms frames, releases one frame per frame
// period to the transport (the first at once), and keeps the playout book:
// which words of the epoch started playing. On an interrupt it clears its
// queue and the transport's, and settles what was heard; at the end of an
// epoch it reports Heard to the llm actor and PlayoutDone to the turn actor.
package pacer
