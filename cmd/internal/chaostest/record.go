package chaostest

import (
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// wireKind tells the caller's receipts apart.
type wireKind int

const (
	wireAudio wireKind = iota + 1
	wireClear
)

// wireRec is one thing the caller received, in wire order: a frame of
// bot audio (its stamp, when it came and when it started playing) or a
// clear.
type wireRec struct {
	Kind  wireKind
	At    time.Time
	Epoch messages.Epoch
	Seq   int
	// Start is when the frame began to play at the caller: at its
	// arrival, or when the frame before it had played (a continuous
	// playout from the caller's buffer). A clear drops the frames that
	// had not started.
	Start time.Time
}

// request is one request the model got, and when.
type request struct {
	At       time.Time
	Messages []agent.Message
}

// toolRun is one execution of a tool.
type toolRun struct {
	Name, Args string
	CallID     string
	Key        string // the idempotency key
	Result     string // what it returned (in its content)
	Done       time.Time
}

// callRecord is everything known of one call once it is over: what its
// caller received and did, and what the server reported. The checkers
// (check.go) read only this, so each can be fed a broken record.
type callRecord struct {
	Name  string
	Fault string
	Tool  bool

	Wire []wireRec
	// Unstamped counts audio frames without a valid stamp (not bot
	// audio of an answer: damaged or from nowhere).
	Unstamped int
	// ErrorReplies counts the server's error messages (it found a
	// message of the caller bad).
	ErrorReplies int
	// HungUpAt is when the caller hung up (zero: it did not, before
	// the script's end).
	HungUpAt time.Time
	// CloseCode and CloseReason are the websocket's close as the caller
	// saw it (-1: no close message, the connection just ended).
	CloseCode   int
	CloseReason string

	// The server's side.
	Clears   []messages.Epoch
	Words    map[messages.Epoch][]spoken
	Events   []messages.CallEvent
	Ended    *messages.CallEnded
	Requests []request
	Runs     []toolRun
}
