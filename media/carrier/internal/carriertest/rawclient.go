package carriertest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Websocket opcodes (RFC 6455 5.2).
const (
	OpText   byte = 0x1
	OpBinary byte = 0x2
	OpClose  byte = 0x8
	OpPing   byte = 0x9
	OpPong   byte = 0xa
)

// ErrRawProtocol: the server sent what the raw client does not take.
var ErrRawProtocol = errors.New("carriertest: unexpected websocket frame")

// RawClient is a websocket client written by hand over a bare
// connection, so that a test controls what a library client would do
// for it: whether it reads at all, whether it answers pings. It speaks
// unfragmented frames only (what the server sends) and masks its own
// frames with a fixed key.
type RawClient struct {
	conn net.Conn
	br   *bufio.Reader

	wmu sync.Mutex // one frame at a time

	readerDone chan struct{} // closed when the reader started by Read* ends
	mu         sync.Mutex
	pings      int
	closeCode  int // of the server's close frame; 0: none
	readErr    error
}

// DialRaw connects to srv and upgrades path by hand, with hdr added to
// the request. On a status other than 101 it returns the response (body
// read into it) and closes the connection.
func DialRaw(ctx context.Context, srv *Server, path string, hdr http.Header) (*RawClient, *http.Response, []byte, error) {
	conn, err := srv.DialConn(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+srv.Host()+path, nil)
	if err != nil {
		_ = conn.Close()
		return nil, nil, nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	if req.Header.Get("Sec-WebSocket-Version") == "" {
		req.Header.Set("Sec-WebSocket-Version", "13")
	}
	if req.Header.Get("Sec-WebSocket-Key") == "" {
		req.Header.Set("Sec-WebSocket-Key", base64.StdEncoding.EncodeToString([]byte("carriertest-key!")))
	}
	if err := req.Write(conn); err != nil {
		_ = conn.Close()
		return nil, nil, nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		_ = conn.Close()
		return nil, nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		_ = conn.Close()
		return nil, resp, body, fmt.Errorf("carriertest: upgrade answered %d", resp.StatusCode)
	}
	return &RawClient{conn: conn, br: br}, resp, nil, nil
}

// mask is the fixed masking key of the client's frames.
var mask = [4]byte{0x5a, 0x17, 0xc3, 0x08}

// Write sends one frame (FIN set, masked).
func (c *RawClient) Write(op byte, payload []byte) error {
	hdr := make([]byte, 0, 14+len(payload))
	hdr = append(hdr, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n <= 0xffff:
		hdr = append(hdr, 0x80|126)
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	hdr = append(hdr, mask[:]...)
	for i, b := range payload {
		hdr = append(hdr, b^mask[i%4])
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.conn.Write(hdr)
	return err
}

// ReadFrame reads the server's next frame. Do not call it while a reader
// started by Discard or Answer runs.
func (c *RawClient) ReadFrame() (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return 0, nil, err
	}
	if h[0]&0x80 == 0 || h[1]&0x80 != 0 {
		return 0, nil, fmt.Errorf("%w: fragmented or masked", ErrRawProtocol)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(c.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(c.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 16<<20 {
		return 0, nil, fmt.Errorf("%w: a frame of %d bytes", ErrRawProtocol, n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return 0, nil, err
	}
	return h[0] & 0x0f, payload, nil
}

// Discard starts a reader that reads every frame and answers none: a
// client that reads but does not answer pings. It ends when the
// connection does (or at the server's close frame).
func (c *RawClient) Discard() { c.startReader(false) }

// Answer starts a reader that answers pings, as any library client does
// while it reads, and drops the rest.
func (c *RawClient) Answer() { c.startReader(true) }

func (c *RawClient) startReader(pong bool) {
	c.readerDone = make(chan struct{})
	go func() {
		defer close(c.readerDone)
		for {
			op, p, err := c.ReadFrame()
			if err != nil {
				c.mu.Lock()
				c.readErr = err
				c.mu.Unlock()
				return
			}
			switch op {
			case OpPing:
				c.mu.Lock()
				c.pings++
				c.mu.Unlock()
				if pong {
					_ = c.Write(OpPong, p)
				}
			case OpClose:
				code := 1005
				if len(p) >= 2 {
					code = int(binary.BigEndian.Uint16(p))
				}
				c.mu.Lock()
				c.closeCode = code
				c.mu.Unlock()
				_ = c.Write(OpClose, p[:min(2, len(p))]) // the close handshake
				return
			}
		}
	}()
}

// Pings is how many pings the reader saw.
func (c *RawClient) Pings() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pings
}

// Wait waits for the reader's end and returns the server's close code
// (0 when the connection ended without a close frame).
func (c *RawClient) Wait() int {
	<-c.readerDone
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeCode
}

// Close closes the connection and waits for the reader, if one runs.
func (c *RawClient) Close() {
	_ = c.conn.Close()
	if c.readerDone != nil {
		<-c.readerDone
	}
}

// SendEvery writes a frame of op and payload every interval from a
// goroutine, until a write fails (the server closed) or stop is called;
// stop waits for the goroutine.
func (c *RawClient) SendEvery(op byte, payload []byte, every time.Duration) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := c.Write(op, payload); err != nil {
				return
			}
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
