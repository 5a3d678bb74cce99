package cartesia

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/jsonscan"
)

// kind is what an inbound message is, for the adapter.
type kind int

const (
	kindOther      kind = iota // phoneme_timestamps, unknown types: no event
	kindChunk                  // "chunk": audio
	kindTimestamps             // "timestamps": word starts
	kindDone                   // "done": the context is over
	kindFlushDone              // "flush_done": a manual flush was spoken
	kindError                  // "error"
)

// message is one decoded inbound message. Its slices are the decoder's
// buffers: valid until the next decode.
type message struct {
	kind kind
	// ctx is the context_id; nil when absent.
	ctx []byte
	// audio is the chunk's decoded bytes (PCM16 little-endian).
	audio []byte
	// words and starts are the word timestamps, of equal length.
	words  []string
	starts []float64
	// status is status_code; code the error's error_code (or title),
	// clipped. The error's free text is never kept: it may quote input.
	status int
	code   string
}

// decoder reads inbound messages in place with a jsonscan.Scanner. One is
// reused per session, on the reader goroutine.
type decoder struct {
	sc     jsonscan.Scanner
	ctx    []byte
	audio  []byte
	words  []string
	starts []float64
	m      message
}

// malformed is the error of a message that is not the service's JSON; it
// never quotes the message (it may hold a transcript).
func malformed(data []byte, what string) error {
	return &providers.Protocol{Detail: fmt.Sprintf("malformed message (%d bytes): %s", len(data), what)}
}

// decode reads one text message. Malformed JSON, a message without a
// type, a chunk whose data is not base64, timestamps whose arrays differ
// in length are *providers.Protocol.
func (d *decoder) decode(data []byte) (*message, error) {
	m := &d.m
	*m = message{}
	d.words, d.starts = d.words[:0], d.starts[:0]
	var typ []byte
	var hasType, hasCtx, badAudio bool
	var title string
	ends := 0
	sc := &d.sc
	sc.Reset(data)
	if !sc.Object() {
		return nil, malformed(data, "not an object")
	}
	for sc.More() {
		switch string(sc.Key()) {
		case "type":
			// Compared at once: the bytes live until the next string read.
			typ = sc.StrBytes()
			hasType = len(typ) > 0
			m.kind = kindOf(typ)
		case "context_id":
			b := sc.StrBytes()
			d.ctx = append(d.ctx[:0], b...)
			hasCtx = b != nil
		case "data":
			b := sc.StrBytes()
			n := base64.StdEncoding.DecodedLen(len(b))
			if cap(d.audio) < n {
				d.audio = make([]byte, n)
			}
			k, err := base64.StdEncoding.Decode(d.audio[:n], b)
			badAudio = err != nil
			d.audio = d.audio[:k]
			m.audio = d.audio
		case "status_code":
			m.status = sc.Int()
		case "error_code":
			m.code = clip(sc.Str(), 64)
		case "title":
			title = clip(sc.Str(), 64)
		case "word_timestamps":
			if sc.Object() {
				for sc.More() {
					switch string(sc.Key()) {
					case "words":
						if sc.Array() {
							for sc.More() {
								d.words = append(d.words, sc.Str())
							}
						}
					case "start":
						if sc.Array() {
							for sc.More() {
								d.starts = append(d.starts, float(sc))
							}
						}
					case "end":
						if sc.Array() {
							for sc.More() {
								float(sc)
								ends++
							}
						}
					default:
						sc.Skip()
					}
				}
			}
		default:
			sc.Skip()
		}
	}
	if err := sc.Done(); err != nil {
		return nil, malformed(data, "not JSON of the expected shape")
	}
	if !hasType {
		return nil, malformed(data, "no type")
	}
	if hasCtx {
		m.ctx = d.ctx
	}
	switch m.kind {
	case kindChunk:
		if badAudio {
			return nil, malformed(data, "chunk data is not base64")
		}
	case kindTimestamps:
		if len(d.words) != len(d.starts) || (ends != 0 && ends != len(d.words)) {
			return nil, malformed(data, "word timestamps of unequal lengths")
		}
		m.words, m.starts = d.words, d.starts
	case kindError:
		if m.code == "" {
			m.code = title
		}
	}
	if m.kind != kindChunk {
		m.audio = nil
	}
	return m, nil
}

// kindOf maps the type member.
func kindOf(t []byte) kind {
	switch string(t) {
	case "chunk":
		return kindChunk
	case "timestamps":
		return kindTimestamps
	case "done":
		return kindDone
	case "flush_done":
		return kindFlushDone
	case "error":
		return kindError
	}
	return kindOther
}

// float reads a number (null reads as 0) with the scanner; anything else
// fails the scan.
func float(sc *jsonscan.Scanner) float64 {
	if sc.Null() {
		return 0
	}
	if c := sc.Peek(); c != '-' && (c < '0' || c > '9') {
		sc.Int() // fails the scan with "an integer"
		return 0
	}
	raw := sc.Raw()
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		sc.Int() // out of range: fail the scan as well
		return 0
	}
	return v
}

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// appendRequest appends a generation request of context wire: the
// config's fields, the transcript and continue.
func appendRequest(b, fields []byte, wire, text string, cont bool) []byte {
	b = append(b, '{')
	b = append(b, fields...)
	b = append(b, `,"context_id":`...)
	b = appendString(b, wire)
	b = append(b, `,"transcript":`...)
	b = appendString(b, text)
	b = append(b, `,"continue":`...)
	b = strconv.AppendBool(b, cont)
	return append(b, '}')
}

// appendCancel appends the cancel message of context wire.
func appendCancel(b []byte, wire string) []byte {
	b = append(b, `{"context_id":`...)
	b = appendString(b, wire)
	return append(b, `,"cancel":true}`...)
}

// appendString appends s as a JSON string (encoding/json's escaping).
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
