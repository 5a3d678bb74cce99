package wire

import (
	"bufio"
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
type SSEReader struct {
	br      *bufio.Reader
	data    []byte
	hasData bool
	max     int
}

// NewSSEReader reads events from r with lines and event data of at most
// max bytes.
func NewSSEReader(r io.Reader, max int) *SSEReader {
	return &SSEReader{br: bufio.NewReaderSize(r, max), max: max}
}

// errLineTooLong is wrapped in the Protocol detail of an overlong line.
var errLineTooLong = errors.New("line too long")

// Next returns the data of the next complete event. At the end of the
// input it returns io.EOF, dropping an event that had no blank line after
// it; a read error is returned as it is; a bound exceeded is a
// *providers.Protocol.
func (r *SSEReader) Next() ([]byte, error) {
	for {
		line, err := r.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
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
