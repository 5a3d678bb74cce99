// Package messages is the vocabulary of a call's actor tree: every value that
// crosses an actor boundary is declared here.
//
// Messages are plain data with no behaviour. They travel as pointers and are
// immutable once sent: the sender must not touch a message (or any slice it
// refers to) after Send, and a receiver that needs to change something makes
// its own copy. The one exception is audio, whose buffers are handed over, not
// shared: the receiver of an audio frame owns it and either passes it on or
// returns it to its pool (see AudioFrame).
//
// The package imports nothing of ours, so every layer can depend on it.
package messages
