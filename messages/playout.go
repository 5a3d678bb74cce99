package messages

import "time"

// Clear tells the transport to drop every frame of epochs older than Epoch
// that it still holds, and the client to flush its playout buffer.
type Clear struct {
	Epoch Epoch
	At    time.Time
}

// Mark asks the transport to echo Name back once the client has played
// everything sent before it.
type Mark struct {
	Epoch Epoch
	Name  string
}

// MarkEcho is the client's answer to a Mark.
type MarkEcho struct {
	Name string
	At   time.Time
}

// Heard is the pacer's account of what the caller heard of Epoch: the
// number of words that started playing (by the heard position, with the lead
// margin subtracted) and whether the epoch was cut short. The llm actor cuts
// the epoch's assistant messages to these words. The pacer pushes it for the
// ends it decides (played out, overlapped by a newer answer, its restart)
// and sends it as the answer to a HeardQuery otherwise: one path per end.
type Heard struct {
	Epoch    Epoch
	Words    int
	Position time.Duration
	Cut      bool
}

// HeardQuery asks the pacer what was heard of Epoch; the answer is a Heard
// sent to the llm actor. The llm actor asks when it interrupts an epoch (an
// end it decides, so the pacer pushes no Heard then), since the pacer may
// never have seen audio of it.
type HeardQuery struct {
	Epoch Epoch
}
