package records

import (
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
)

// NumberPolicy says what a record keeps of the parties' numbers.
type NumberPolicy string

// The numbers policies.
const (
	// NumbersKeep keeps the number and its keyed hash.
	NumbersKeep NumberPolicy = "keep"
	// NumbersHash keeps only the keyed hash (the default): a caller's
	// calls can be found and erased by their number, and the number is
	// not on disk.
	NumbersHash NumberPolicy = "hash"
	// NumbersDrop keeps nothing of the numbers.
	NumbersDrop NumberPolicy = "drop"
)

// The transcript and tool-data policies.
const (
	Keep = "keep"
	Drop = "drop"
)

// MinKeyBytes is the shortest NumberKey accepted.
const MinKeyBytes = 16

// Config configures the node's records service.
type Config struct {
	// Node names this node in its records (default: the host's name).
	Node string
	// Numbers is the numbers policy (default hash).
	Numbers NumberPolicy
	// NumberKey is the HMAC-SHA256 key of Party.Hash, at least
	// MinKeyBytes long; required unless Numbers is drop. The caller reads
	// it from the environment (BRISVOX_RECORDS_KEY).
	NumberKey []byte
	// Transcripts: keep (default) or drop.
	Transcripts string
	// ToolData: drop (default: tool arguments and results are not
	// stored) or keep (redacted).
	ToolData string
	// Redactor redacts transcripts, tool arguments and results before
	// anything is journaled. Nil: no redaction (production always passes
	// one).
	Redactor Redactor
	// Retention is how long each part of a record is kept; the sweeper
	// enforces it every SweepEvery (default 1 h).
	Retention  Retention
	SweepEvery time.Duration
	// QueueSize bounds the records waiting for the journal (default
	// 1024); a record that finds it full is dropped and counted.
	QueueSize int
	// CheckpointQueue bounds the live-call checkpoints waiting for the
	// journal (default 1024); a checkpoint that finds it full is dropped
	// and counted (the call's next one supersedes it).
	CheckpointQueue int
	// Recordings deletes the recordings of swept and erased records (the
	// recorder). Nil: recordings are not deleted here.
	Recordings RecordingRemover
	Log        zerolog.Logger
}

// Redactor is what records needs of redact.Redactor.
type Redactor interface {
	// String returns s redacted and the counts of what it replaced, by kind.
	String(s string) (string, map[string]int)
	// JSON redacts the string values of a JSON document, keys kept.
	JSON(raw []byte) ([]byte, map[string]int, error)
}

// Journal is what records needs of journal.Journal.
type Journal interface {
	// Append writes an entry; it is durable on return.
	Append(kind byte, payload []byte) (uint64, error)
	Ack(seq uint64) error
	// Replay calls fn for every entry not acked, in order.
	Replay(fn func(seq uint64, kind byte, payload []byte) error) error
}

// Sink receives every record once it is durable (webhooks). Deliver must
// not block long: it enqueues durably and returns.
type Sink interface {
	Deliver(r *Record) error
}

// RecordingRemover deletes a recording's audio (the recorder).
type RecordingRemover interface {
	Remove(rec Recording) error
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.Numbers == "" {
		c.Numbers = NumbersHash
	}
	if c.Transcripts == "" {
		c.Transcripts = Keep
	}
	if c.ToolData == "" {
		c.ToolData = Drop
	}
	if c.SweepEvery == 0 {
		c.SweepEvery = time.Hour
	}
	if c.QueueSize == 0 {
		c.QueueSize = 1024
	}
	if c.CheckpointQueue == 0 {
		c.CheckpointQueue = 1024
	}
	if c.Node == "" {
		c.Node, _ = os.Hostname()
	}
	return c
}

// Validate says what is wrong with a config (defaults filled in).
func (c Config) Validate() error {
	c = c.withDefaults()
	switch c.Numbers {
	case NumbersKeep, NumbersHash:
		if len(c.NumberKey) < MinKeyBytes {
			return fmt.Errorf("%w: the numbers policy %q needs a key of at least %d bytes to hash numbers with (%d given): set BRISVOX_RECORDS_KEY, or choose the numbers policy drop",
				ErrInvalidConfig, c.Numbers, MinKeyBytes, len(c.NumberKey))
		}
	case NumbersDrop:
	default:
		return fmt.Errorf("%w: numbers policy %q: choose keep, hash or drop", ErrInvalidConfig, c.Numbers)
	}
	if c.Transcripts != Keep && c.Transcripts != Drop {
		return fmt.Errorf("%w: transcripts policy %q: choose keep or drop", ErrInvalidConfig, c.Transcripts)
	}
	if c.ToolData != Keep && c.ToolData != Drop {
		return fmt.Errorf("%w: tool data policy %q: choose keep or drop", ErrInvalidConfig, c.ToolData)
	}
	if c.SweepEvery < 0 || c.QueueSize < 0 || c.CheckpointQueue < 0 {
		return fmt.Errorf("%w: the sweep interval and queue sizes must not be negative", ErrInvalidConfig)
	}
	r := c.Retention
	if r.Records < 0 || r.Transcripts < 0 || r.Recordings < 0 || r.ToolData < 0 || r.Numbers < 0 {
		return fmt.Errorf("%w: a retention is negative (zero keeps forever)", ErrInvalidConfig)
	}
	if c.Node == "" {
		return fmt.Errorf("%w: no node name (and the host's name is unknown): set the node's name", ErrInvalidConfig)
	}
	return nil
}
