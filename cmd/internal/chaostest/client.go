package chaostest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// rate is the calls' sample rate both ways (the mocks' too: no
// resampling, so the stamps pass).
const rate = 16000

// hangupWait bounds the wait for the server to close the call after the
// caller hung up (or its script ended).
const hangupWait = 15 * time.Second

// caller is one real-time caller of the PCM websocket protocol: it
// streams its script in real time (a frame every 20 ms on an absolute
// schedule, so the server's audio clock holds), plays the bot's audio
// into a simulated playout buffer, echoes each mark once the audio
// before it has played, drops what has not played at a clear, and hangs
// up at the script's end or at its fault's moment. It records what came
// (callRecord's caller side).
type caller struct {
	plan   *plan
	url    string
	client *http.Client
}

// echo is a mark owed to the server once the audio before it has played.
type echo struct {
	name string
	due  time.Time
}

// marks are the caller's owed echoes, shared by its reader (which adds
// and, at a clear, drops them) and its writer (which sends them).
type marks struct {
	mu    sync.Mutex
	owed  []echo
	ready []string
}

func (m *marks) add(name string, due time.Time) {
	m.mu.Lock()
	m.owed = append(m.owed, echo{name: name, due: due})
	m.mu.Unlock()
}

func (m *marks) drop() {
	m.mu.Lock()
	m.owed = m.owed[:0]
	m.mu.Unlock()
}

// due takes the echoes due by now, in order (the protocol wants them in
// order).
func (m *marks) due(now time.Time) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ready = m.ready[:0]
	n := 0
	for n < len(m.owed) && !m.owed[n].due.After(now) {
		m.ready = append(m.ready, m.owed[n].name)
		n++
	}
	m.owed = append(m.owed[:0], m.owed[n:]...)
	return m.ready
}

// run places the call and plays it to its end; the record holds the
// caller's side. It returns when the websocket is closed and the
// caller's reader goroutine has ended. started is set to the script's
// zero time.
func (c *caller) run(ctx context.Context, rec *callRecord, started *time.Time) error {
	ws, resp, err := websocket.Dial(ctx, c.url, &websocket.DialOptions{HTTPClient: c.client})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return fmt.Errorf("%w: dial %s: %w", ErrRun, c.plan.name, err)
	}
	defer ws.CloseNow()
	rec.CloseCode = -1
	var owed marks
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		c.read(ctx, ws, rec, &owed)
	}()
	defer func() { <-readerDone }()

	start := time.Now()
	*started = start
	p := c.plan
	pcm := make([]int16, rate/50)
	buf := make([]byte, 2*len(pcm))
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	n := p.script.frames()
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * messages.FrameDuration)
		timer.Reset(time.Until(at))
		select {
		case <-timer.C:
		case <-readerDone:
			return nil // the server ended the call first
		case <-ctx.Done():
			return ctx.Err()
		}
		if p.hangupAt > 0 && time.Duration(i)*messages.FrameDuration >= p.hangupAt {
			rec.HungUpAt = time.Now()
			if p.abrupt {
				_ = ws.CloseNow() // the connection drops: no close, no hangup
				return nil
			}
			break
		}
		p.script.fill(i, rate, pcm)
		for j, s := range pcm {
			binary.LittleEndian.PutUint16(buf[2*j:], uint16(s))
		}
		if err := ws.Write(ctx, websocket.MessageBinary, buf); err != nil {
			return nil // closed under us: the record says how
		}
		for _, name := range owed.due(time.Now()) {
			msg, _ := json.Marshal(map[string]string{"type": "mark", "name": name})
			if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
				return nil
			}
		}
	}
	// The script is over (or the hang-up is due): hang up and wait for
	// the server's close.
	_ = ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hangup"}`))
	timer.Reset(hangupWait)
	select {
	case <-readerDone:
	case <-timer.C:
		return fmt.Errorf("%w: %s: the server did not close the call %v after the hang-up", ErrRun, p.name, hangupWait)
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// read takes the server's messages until the websocket ends.
func (c *caller) read(ctx context.Context, ws *websocket.Conn, rec *callRecord, owed *marks) {
	var playEnd time.Time
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				rec.CloseCode, rec.CloseReason = int(ce.Code), ce.Reason
			}
			return
		}
		now := time.Now()
		if typ == websocket.MessageBinary {
			var head [stampLen]int16
			for j := range head {
				if 2*j+1 < len(data) {
					head[j] = int16(binary.LittleEndian.Uint16(data[2*j:]))
				}
			}
			e, seq, ok := readStamp(head[:])
			if !ok || len(data) != 2*rate/50 {
				rec.Unstamped++
				continue
			}
			start := now
			if playEnd.After(start) {
				start = playEnd
			}
			playEnd = start.Add(messages.FrameDuration)
			rec.Wire = append(rec.Wire, wireRec{Kind: wireAudio, At: now, Epoch: e, Seq: seq, Start: start})
			if d := c.plan.readDelay; d > 0 {
				time.Sleep(d) // the slow consumer
			}
			continue
		}
		var m struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(data, &m) != nil {
			rec.ErrorReplies++ // not the protocol's: counted as the server's fault
			continue
		}
		switch m.Type {
		case "clear":
			rec.Wire = append(rec.Wire, wireRec{Kind: wireClear, At: now})
			playEnd = now // what had not played is dropped
			owed.drop()
		case "mark":
			due := playEnd
			if due.Before(now) {
				due = now
			}
			owed.add(m.Name, due)
		case "error":
			rec.ErrorReplies++
		}
	}
}
