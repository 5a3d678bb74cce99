package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/brisvox/brisvox/providers"
)

// SSEReader reads the data of server-sent events. A line longer than max
// bytes, or an event whose data is, is a protocol error: nothing buffers
// without bound. The data returned by next is valid until the next call.
//
// Lines end in LF or CRLF (a lone CR is not a line end here: none of the
// vendors sends one). Comments, event, id and retry fields
// are skipped.
//
// The line buffer starts small (initialBuffer) and doubles up to max as
// longer lines come, so a stream of short chunks holds a few KiB, not the
// bound (64-256 KiB a stream with a bufio.Reader of the bound's size).
type SSEReader struct {
	r          io.Reader
	buf        []byte
	start, end int // the unread bytes are buf[start:end]
	rerr       error
	data       []byte
	hasData    bool
	max        int
}

// initialBuffer is the line buffer's first size: a streamed chunk of any
// of the vendors fits in it.
const initialBuffer = 4 << 10

// NewSSEReader reads events from r with lines and event data of at most
// max bytes.
func NewSSEReader(r io.Reader, max int) *SSEReader {
	return &SSEReader{r: r, buf: make([]byte, min(initialBuffer, max)), max: max}
}

// errLineTooLong is wrapped in the Protocol detail of an overlong line.
var errLineTooLong = errors.New("line too long")

// maxEmptyReads is how many reads in a row may return nothing before the
// reader gives up (io.ErrNoProgress), as bufio does.
const maxEmptyReads = 100

// readLine returns the next line with its LF, valid until the next call.
// A line of more than max bytes (LF included) is errLineTooLong; at the
// end of the input, a last line without its LF is not returned: the read
// error is (io.EOF for a clean end).
func (r *SSEReader) readLine() ([]byte, error) {
	scanned := 0 // bytes of buf[start:end] known to hold no LF
	for {
		if i := bytes.IndexByte(r.buf[r.start+scanned:r.end], '\n'); i >= 0 {
			n := scanned + i + 1
			if n > r.max {
				return nil, errLineTooLong
			}
			line := r.buf[r.start : r.start+n]
			r.start += n
			return line, nil
		}
		scanned = r.end - r.start
		if scanned >= r.max {
			return nil, errLineTooLong
		}
		if r.rerr != nil {
			return nil, r.rerr
		}
		if r.start > 0 {
			// Move the partial line to the front.
			r.end = copy(r.buf, r.buf[r.start:r.end])
			r.start = 0
		}
		if r.end == len(r.buf) {
			r.buf = append(r.buf, make([]byte, min(len(r.buf), r.max-len(r.buf)+1))...)
		}
		r.fill()
	}
}

// fill reads once into the free end of the buffer, recording an error.
func (r *SSEReader) fill() {
	for range maxEmptyReads {
		n, err := r.r.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.rerr = errors.New("wire: reader returned an invalid count")
			return
		}
		r.end += n
		if err != nil {
			r.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.rerr = io.ErrNoProgress
}

// Next returns the data of the next complete event. At the end of the
// input it returns io.EOF, dropping an event that had no blank line after
// it; a read error is returned as it is; a bound exceeded is a
// *providers.Protocol.
func (r *SSEReader) Next() ([]byte, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return nil, &providers.Protocol{Detail: fmt.Sprintf("%v: over %d bytes", errLineTooLong, r.max)}
			}
			// A last line without its newline is incomplete: the stream was
			// cut, which the caller reports.
			return nil, err
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) == 0 {
			if r.hasData {
				r.hasData = false
				return r.data, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if string(field) != "data" {
			continue
		}
		if !r.hasData {
			r.data = r.data[:0]
		} else {
			r.data = append(r.data, '\n')
		}
		if len(r.data)+len(value) > r.max {
			return nil, &providers.Protocol{Detail: fmt.Sprintf("event data over %d bytes", r.max)}
		}
		r.data = append(r.data, value...)
		r.hasData = true
	}
}
