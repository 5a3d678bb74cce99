package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The calls' callers speak the PCM websocket with a client of their own,
// not a websocket library: every read of the TCP socket is a recvmsg with
// SO_TIMESTAMPNS, so the time a bot frame arrived is the kernel's receive
// time of the read that completed it (for TCP the timestamp of the last
// segment in the read), not the time the niced callers' process got to
// it. A library reading through a buffer could not say which read
// completed which message.

// WebSocket opcodes (RFC 6455 5.2).
const (
	wsCont   = 0x0
	wsText   = 0x1
	wsBinary = 0x2
	wsClose  = 0x8
	wsPing   = 0x9
	wsPong   = 0xA
)

// Errors of the frame parser: the server broke the protocol.
var (
	errWSMasked     = errors.New("ws: a server frame is masked")
	errWSReserved   = errors.New("ws: reserved bits set (no extension was negotiated)")
	errWSOpcode     = errors.New("ws: unknown opcode")
	errWSControl    = errors.New("ws: a control frame is fragmented or over 125 bytes")
	errWSContinue   = errors.New("ws: a continuation without a message, or a message inside a message")
	errWSTooLarge   = errors.New("ws: message over the limit")
	errWSHandshake  = errors.New("ws: handshake refused")
	errWSLengthForm = errors.New("ws: a 64-bit length with its top bit set")
)

// wsParser cuts a server's byte stream into messages. feed takes the bytes
// of one read and the read's time; every message the bytes complete is
// handed to emit with that time (control frames as they come, between
// the fragments of a message if need be). The payload is only valid
// during emit.
type wsParser struct {
	// max bounds a message (and a frame); a larger one is an error.
	max int
	buf []byte // bytes not yet parsed (an incomplete frame)
	msg []byte // the fragments of the data message being assembled
	op  byte   // its opcode (0: none)
}

func newWSParser(max int) *wsParser { return &wsParser{max: max} }

// feed parses b. After an error the parser is not to be used again.
func (p *wsParser) feed(b []byte, at time.Time, emit func(op byte, payload []byte, at time.Time)) error {
	data := b
	if len(p.buf) > 0 {
		p.buf = append(p.buf, b...)
		data = p.buf
	}
	for {
		n, err := p.frame(data, at, emit)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		data = data[n:]
	}
	// Keep the incomplete rest: a copy, since data aliases b or p.buf
	// (append moves an overlapping tail of p.buf correctly).
	p.buf = append(p.buf[:0], data...)
	return nil
}

// frame parses one frame at the start of data; n is 0 when data holds no
// whole frame yet.
func (p *wsParser) frame(data []byte, at time.Time, emit func(byte, []byte, time.Time)) (n int, err error) {
	if len(data) < 2 {
		return 0, nil
	}
	b0, b1 := data[0], data[1]
	if b1&0x80 != 0 {
		return 0, errWSMasked
	}
	if b0&0x70 != 0 {
		return 0, errWSReserved
	}
	fin, op := b0&0x80 != 0, b0&0x0F
	hdr := 2
	length := uint64(b1 & 0x7F)
	switch length {
	case 126:
		if len(data) < 4 {
			return 0, nil
		}
		length, hdr = uint64(binary.BigEndian.Uint16(data[2:])), 4
	case 127:
		if len(data) < 10 {
			return 0, nil
		}
		length, hdr = binary.BigEndian.Uint64(data[2:]), 10
		if length>>63 != 0 {
			return 0, errWSLengthForm
		}
	}
	control := op >= 0x8
	switch {
	case op != wsCont && op != wsText && op != wsBinary && op != wsClose && op != wsPing && op != wsPong:
		return 0, errWSOpcode
	case control && (!fin || length > 125):
		return 0, errWSControl
	case length > uint64(p.max):
		return 0, errWSTooLarge
	}
	if uint64(len(data)-hdr) < length {
		return 0, nil
	}
	payload := data[hdr : hdr+int(length)]
	n = hdr + int(length)
	if control {
		emit(op, payload, at)
		return n, nil
	}
	switch {
	case op == wsCont && p.op == 0, op != wsCont && p.op != 0:
		return 0, errWSContinue
	case op != wsCont && fin:
		emit(op, payload, at) // the common case: one frame, no copy
		return n, nil
	case op != wsCont:
		p.op, p.msg = op, append(p.msg[:0], payload...)
		return n, nil
	}
	if len(p.msg)+len(payload) > p.max {
		return 0, errWSTooLarge
	}
	p.msg = append(p.msg, payload...)
	if fin {
		op := p.op
		p.op = 0
		emit(op, p.msg, at)
	}
	return n, nil
}

// wsClient is a client websocket whose reads carry the kernel's receive
// time. Writes may come from any goroutine; Run reads on one.
type wsClient struct {
	conn *net.TCPConn
	raw  syscall.RawConn
	p    *wsParser
	// pending are bytes that came with the handshake's response, and
	// their time.
	pending   []byte
	pendingAt time.Time
	local     int // the local port (the server's view of this call)

	wmu  sync.Mutex
	wbuf []byte
	mask uint32 // the masking key's generator state (xorshift)
}

// dialWS opens a websocket to ws://addr+path. The client sends no Origin
// (it is not a browser) and asks for no extension.
func dialWS(ctx context.Context, addr, path string) (*wsClient, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	w, err := newWSClient(nc.(*net.TCPConn))
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	tc := w.conn
	if dl, ok := ctx.Deadline(); ok {
		_ = tc.SetDeadline(dl)
	}
	if err := w.handshake(addr, path); err != nil {
		_ = tc.Close()
		return nil, err
	}
	_ = tc.SetDeadline(time.Time{})
	return w, nil
}

// newWSClient makes a client of an open connection (the handshake not
// done): it turns on the kernel's receive times.
func newWSClient(tc *net.TCPConn) (*wsClient, error) {
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil, fmt.Errorf("ws: SO_TIMESTAMPNS: %v %v", err, serr)
	}
	var seed [4]byte
	_, _ = rand.Read(seed[:])
	return &wsClient{conn: tc, raw: raw, p: newWSParser(1 << 16), mask: binary.LittleEndian.Uint32(seed[:]) | 1,
		local: tc.LocalAddr().(*net.TCPAddr).Port}, nil
}

// wsGUID is the handshake's constant (RFC 6455 1.3).
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func (w *wsClient) handshake(addr, path string) error {
	var k [16]byte
	_, _ = rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(w.conn, req); err != nil {
		return err
	}
	var resp []byte
	buf := make([]byte, 4096)
	for {
		n, at, err := w.recv(buf)
		if err != nil {
			return err
		}
		resp = append(resp, buf[:n]...)
		if i := bytes.Index(resp, []byte("\r\n\r\n")); i >= 0 {
			head := string(resp[:i])
			w.pending, w.pendingAt = resp[i+4:], at
			return checkHandshake(head, key)
		}
		if len(resp) > 16<<10 {
			return fmt.Errorf("%w: a response head over 16 KiB", errWSHandshake)
		}
	}
}

// checkHandshake reads the response head: 101 and the key's accept.
func checkHandshake(head, key string) error {
	lines := strings.Split(head, "\r\n")
	if !strings.HasPrefix(lines[0], "HTTP/1.1 101") {
		return fmt.Errorf("%w: %s", errWSHandshake, lines[0])
	}
	sum := sha1.Sum([]byte(key + wsGUID))
	want := base64.StdEncoding.EncodeToString(sum[:])
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Sec-WebSocket-Accept") {
			if strings.TrimSpace(value) != want {
				return fmt.Errorf("%w: wrong Sec-WebSocket-Accept", errWSHandshake)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: no Sec-WebSocket-Accept", errWSHandshake)
}

// recv is one recvmsg: the bytes and the kernel's receive time (the
// wall clock's if the kernel gave none).
func (w *wsClient) recv(buf []byte) (int, time.Time, error) {
	var oob [64]byte
	var n, oobn int
	var rerr error
	err := w.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob[:], 0)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, time.Time{}, err
	}
	if n == 0 {
		return 0, time.Time{}, io.EOF
	}
	at, ok := kernelStampOf(oob[:oobn])
	if !ok {
		at = time.Now()
	}
	return n, at, nil
}

// Run reads until the connection ends, handing each message to emit
// (pings are answered first). It returns nil after the server's close
// frame, else the error.
//
// It reads frame by frame: the header, then exactly the rest of the
// frame, so a read never takes bytes of the next message and the kernel
// time of a message is that of the last segment it came in, even when
// the callers' process is late and several messages wait in the socket
// (a read of everything queued would give them all the newest one's
// time).
func (w *wsClient) Run(emit func(op byte, payload []byte, at time.Time)) error {
	closed := false
	var werr error
	handle := func(op byte, payload []byte, at time.Time) {
		switch op {
		case wsPing:
			if err := w.Write(wsPong, payload); err != nil && werr == nil {
				werr = err
			}
		case wsClose:
			if !closed {
				closed = true
				_ = w.Write(wsClose, payload) // echo the code
			}
		}
		emit(op, payload, at)
	}
	buf := make([]byte, 0, 4096)
	for {
		buf = buf[:0]
		var at time.Time
		var err error
		buf, at, err = w.readFrame(buf)
		if err != nil {
			if closed {
				return nil
			}
			return err
		}
		if err := w.p.feed(buf, at, handle); err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
	}
}

// readFrame appends one whole frame to buf and returns the time of the
// read that completed it.
func (w *wsClient) readFrame(buf []byte) ([]byte, time.Time, error) {
	var at time.Time
	var err error
	if buf, at, err = w.readN(buf, 2); err != nil {
		return buf, at, err
	}
	ext := 0
	switch buf[1] & 0x7F {
	case 126:
		ext = 2
	case 127:
		ext = 8
	}
	if buf[1]&0x80 != 0 {
		ext += 4 // a mask (which the parser refuses)
	}
	if ext > 0 {
		if buf, at, err = w.readN(buf, ext); err != nil {
			return buf, at, err
		}
	}
	hdr, n, ok := wsFrameLen(buf)
	switch {
	case !ok:
		return buf, at, errWSLengthForm
	case n > uint64(w.p.max):
		return buf, at, errWSTooLarge
	case n > 0:
		return w.readN(buf, int(n)+hdr-len(buf))
	}
	return buf, at, nil
}

// wsFrameLen reads a frame header: its length (mask included) and the
// payload's; ok is false when the header is incomplete or its 64-bit
// length has the top bit set.
func wsFrameLen(b []byte) (hdr int, payload uint64, ok bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	hdr, payload = 2, uint64(b[1]&0x7F)
	switch payload {
	case 126:
		if len(b) < 4 {
			return 0, 0, false
		}
		hdr, payload = 4, uint64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		if len(b) < 10 {
			return 0, 0, false
		}
		hdr, payload = 10, binary.BigEndian.Uint64(b[2:])
		if payload>>63 != 0 {
			return 0, 0, false
		}
	}
	if b[1]&0x80 != 0 {
		hdr += 4
	}
	return hdr, payload, true
}

// readN appends exactly n bytes (the pending ones first) and returns the
// time of the read that brought the last of them.
func (w *wsClient) readN(buf []byte, n int) ([]byte, time.Time, error) {
	at := w.pendingAt
	for n > 0 && len(w.pending) > 0 {
		k := min(n, len(w.pending))
		buf = append(buf, w.pending[:k]...)
		w.pending, n = w.pending[k:], n-k
	}
	for n > 0 {
		if cap(buf)-len(buf) < n {
			buf = slices.Grow(buf, n)
		}
		k, t, err := w.recv(buf[len(buf) : len(buf)+n])
		if err != nil {
			return buf, at, err
		}
		buf, n, at = buf[:len(buf)+k], n-k, t
	}
	return buf, at, nil
}

// Write sends one masked frame.
func (w *wsClient) Write(op byte, payload []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.mask ^= w.mask << 13
	w.mask ^= w.mask >> 17
	w.mask ^= w.mask << 5
	w.wbuf = appendWSFrame(w.wbuf[:0], op, payload, w.mask)
	_, err := w.conn.Write(w.wbuf)
	return err
}

// Close closes the connection.
func (w *wsClient) Close() error { return w.conn.Close() }

// appendWSFrame appends a final client frame of op with payload masked by
// key (RFC 6455 5.3).
func appendWSFrame(b []byte, op byte, payload []byte, key uint32) []byte {
	b = append(b, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xFFFF:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = binary.BigEndian.AppendUint32(b, key)
	start := len(b)
	b = append(b, payload...)
	k := [4]byte(b[start-4 : start])
	for i := range b[start:] {
		b[start+i] ^= k[i&3]
	}
	return b
}
