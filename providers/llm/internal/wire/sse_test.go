package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/brisvox/brisvox/providers"
)

// oracleEvents reads body the way the first SSEReader did, on a
// bufio.Reader of the bound's size: the events' data, then how it ended
// ("eof", "protocol" or the read error).
func oracleEvents(body io.Reader, max int) ([]string, string) {
	br := bufio.NewReaderSize(body, max)
	var evs []string
	var data []byte
	has := false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return evs, "protocol"
			}
			if errors.Is(err, io.EOF) {
				return evs, "eof"
			}
			return evs, err.Error()
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		if len(line) == 0 {
			if has {
				evs = append(evs, string(data))
				has = false
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if string(field) != "data" {
			continue
		}
		if has {
			data = append(data, '\n')
		} else {
			data = data[:0]
		}
		if len(data)+len(value) > max {
			return evs, "protocol"
		}
		data = append(data, value...)
		has = true
	}
}

// readerEvents reads body with the SSEReader, in the same form.
func readerEvents(body io.Reader, max int) ([]string, string) {
	r := NewSSEReader(body, max)
	var evs []string
	for range 1 << 20 {
		d, err := r.Next()
		if err == nil {
			evs = append(evs, string(d))
			continue
		}
		if errors.Is(err, providers.ErrProtocol) {
			return evs, "protocol"
		}
		if errors.Is(err, io.EOF) {
			return evs, "eof"
		}
		return evs, err.Error()
	}
	return evs, "no end"
}

// sameAsOracle compares the reader with the oracle on body, read whole and
// one byte at a time.
func sameAsOracle(t *testing.T, body []byte, max int) {
	t.Helper()
	want, wend := oracleEvents(bytes.NewReader(body), max)
	for _, name := range []string{"whole", "one byte"} {
		var rd io.Reader = bytes.NewReader(body)
		if name == "one byte" {
			rd = iotest.OneByteReader(rd)
		}
		got, end := readerEvents(rd, max)
		if end != wend || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s, max %d, body %q:\n got %q, %s\nwant %q, %s", name, max, body, got, end, want, wend)
		}
	}
}

var sseCases = []string{
	"data: a\n\ndata: b\r\n\r\n",
	": comment\nevent: x\nid: 1\nretry: 5\ndata:no space\n\n",
	"data: one\ndata: two\n\n",
	"data: cut at the end",
	"data: no blank line\n",
	"\n\n\ndata: x\n\n",
	"data\n\n",
	"data: " + strings.Repeat("y", 40) + "\n\n",
	"data: " + strings.Repeat("z", 5000) + "\n\n" + "data: after\n\n",
}

// TestSSEReaderMatchesBufio: the growing buffer reads what a bufio.Reader
// of the bound's size read: the same events, the same end, the same
// refusal of an overlong line, whatever the read sizes. Mutations caught:
// a line of exactly max bytes refused (n >= max), a line one byte over
// accepted (no check before growing), the partial line not moved to the
// front (events garbled when read one byte at a time).
func TestSSEReaderMatchesBufio(t *testing.T) {
	for _, c := range sseCases {
		for _, max := range []int{16, 41, 47, 48, 49, 4096, 6000, 64 << 10} {
			sameAsOracle(t, []byte(c), max)
		}
	}
	// A line of exactly max bytes, LF included, and one byte more.
	for _, max := range []int{256, 4096, 9000} {
		line := "data: " + strings.Repeat("q", max-7) + "\n"
		sameAsOracle(t, []byte(line+"\n"), max)
		sameAsOracle(t, []byte("data: q"+line[6:]+"\n"), max)
	}
}

func FuzzSSEReader(f *testing.F) {
	for _, c := range sseCases {
		f.Add([]byte(c), uint16(64))
	}
	f.Fuzz(func(t *testing.T, body []byte, max uint16) {
		if max < 16 {
			return
		}
		sameAsOracle(t, body, int(max))
	})
}

// TestSSEReaderStaysSmall: a long stream of short chunks keeps the first
// 4 KiB buffer; one long line grows it, up to the bound. Mutation caught:
// allocating the bound up front.
func TestSSEReaderStaysSmall(t *testing.T) {
	var b bytes.Buffer
	for range 2000 {
		b.WriteString("data: {\"choices\":[{\"delta\":{\"content\":\"word \"}}]}\n\n")
	}
	r := NewSSEReader(&b, 256<<10)
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		n++
	}
	if n != 2000 || cap(r.buf) != initialBuffer {
		t.Fatalf("%d events, buffer %d bytes, want 2000 and %d", n, cap(r.buf), initialBuffer)
	}
	long := "data: " + strings.Repeat("x", 100<<10) + "\n\n"
	r = NewSSEReader(strings.NewReader(long), 256<<10)
	if d, err := r.Next(); err != nil || len(d) != 100<<10 || cap(r.buf) > 256<<10+1 {
		t.Fatalf("long line: %d bytes, %v, buffer %d", len(d), err, cap(r.buf))
	}
}

// TestSSEReaderNoProgress: a reader that keeps returning nothing ends the
// stream with io.ErrNoProgress instead of spinning.
func TestSSEReaderNoProgress(t *testing.T) {
	r := NewSSEReader(emptyReader{}, 1024)
	if _, err := r.Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err %v, want io.ErrNoProgress", err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }
