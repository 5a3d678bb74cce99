package messages

import "time"

// TTSAudio is synthesized audio of Epoch at Rate, in order. Chunks may have
// any length; the pacer cuts them into frames. The slice is handed over.
type TTSAudio struct {
	Epoch Epoch
	Rate  int
	PCM   []int16
}

// TTSWord says that a word of Epoch's answer starts at Offset within the
// epoch's audio. Words arrive before or with the audio that holds them.
type TTSWord struct {
	Epoch  Epoch
	Text   string
	Offset time.Duration
}

// TTSEnded closes Epoch's audio: nothing more comes for it. Err is set when
// synthesis failed and the epoch's audio stops short.
type TTSEnded struct {
	Epoch Epoch
	Err   error
}
