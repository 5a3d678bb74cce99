package carriertest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Refused is a burst's answer other than 101.
type Refused struct {
	Status     int
	RetryAfter string
	Cause      string // the JSON body's "cause"
}

// Burst dials n websockets to path at once (all wait on one start
// barrier) and returns the ones upgraded and the other answers. The
// caller closes the open ones.
func Burst(ctx context.Context, srv *Server, n int, path string) (open []*websocket.Conn, refused []Refused, errs []error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{})
	)
	for range n {
		wg.Go(func() {
			<-start
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			ws, resp, err := websocket.Dial(dctx, srv.URL(path), &websocket.DialOptions{HTTPClient: srv.Client()})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				open = append(open, ws)
			case resp != nil:
				r := Refused{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
				if resp.Body != nil {
					var body struct{ Cause string }
					b, _ := io.ReadAll(resp.Body)
					_ = json.Unmarshal(b, &body)
					r.Cause = body.Cause
					_ = resp.Body.Close()
				}
				refused = append(refused, r)
			default:
				errs = append(errs, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return open, refused, errs
}

// WaitFor polls cond on the wall clock (loopback tests only) until it
// holds or d passes; it reports whether it held.
func WaitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// Header is a one-entry http.Header.
func Header(k, v string) http.Header {
	h := http.Header{}
	h.Set(k, v)
	return h
}
