package opclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseEvent is one server-sent event as dispatched: its type ("message"
// when it named none), its data lines joined by "\n", its id field.
type sseEvent struct {
	Name string
	Data []byte
	ID   string
}

// errEventTooLong: an event (or one of its lines) longer than the
// reader's bound.
var errEventTooLong = errors.New("a server-sent event longer than the bound")

// sseReader reads server-sent events as the HTML standard's event stream
// parser does: lines end with "\n", "\r\n" or "\r"; a line starting with
// ":" is a comment; "field: value" loses one space after the colon; a
// field without a colon has an empty value; a blank line dispatches the
// event when it has data; an incomplete event at the end is dropped.
// Only the event, data and id fields count. Not safe for concurrent use.
type sseReader struct {
	r   *bufio.Reader
	max int
	// line is the line being read; skipLF drops the "\n" of a "\r\n"
	// whose "\r" ended the last line (without waiting for it: the
	// stream may pause there).
	line    []byte
	skipLF  bool
	started bool
	// The event being built.
	name    string
	data    []byte
	hasData bool
	id      string
	// comments counts the comment lines (the server's keepalives).
	comments int
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), max: max}
}

var bom = []byte("\xef\xbb\xbf")

// next is the next dispatched event: io.EOF at the stream's end (the
// incomplete event dropped), errEventTooLong past the bound, or the
// reader's error.
func (p *sseReader) next() (sseEvent, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if !p.started {
			p.started = true
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) == 0 {
			if !p.hasData {
				p.name = ""
				continue
			}
			ev := sseEvent{Name: p.name, Data: bytes.TrimSuffix(p.data, []byte("\n")), ID: p.id}
			if ev.Name == "" {
				ev.Name = "message"
			}
			ev.Data = append([]byte(nil), ev.Data...)
			p.name, p.data, p.hasData = "", p.data[:0], false
			return ev, nil
		}
		if line[0] == ':' {
			p.comments++
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			p.name = string(value)
		case "data":
			if len(p.data)+len(value)+1 > p.max {
				return sseEvent{}, errEventTooLong
			}
			p.data = append(append(p.data, value...), '\n')
			p.hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				p.id = string(value)
			}
		}
	}
}

// readLine is the next line without its end. A line cut by the end of
// the stream is not a line: io.EOF.
func (p *sseReader) readLine() ([]byte, error) {
	p.line = p.line[:0]
	for {
		c, err := p.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if p.skipLF {
			p.skipLF = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\r':
			p.skipLF = true
			return p.line, nil
		case '\n':
			return p.line, nil
		}
		if len(p.line) >= p.max {
			return nil, errEventTooLong
		}
		p.line = append(p.line, c)
	}
}
