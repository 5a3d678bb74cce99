package carriertest

import (
	"context"
	"net/http"
	"testing"

	"github.com/coder/websocket"
)

// IdleConn is the client end of an open websocket whose server end only
// waits for the close, for benchmarks and allocation tests that need a
// *websocket.Conn to build a call around but never write to it. Everything
// is closed and waited for at the end of the test.
func IdleConn(tb testing.TB) *websocket.Conn {
	tb.Helper()
	done := make(chan struct{})
	srv := NewPipeServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		_, _, _ = ws.Read(context.Background()) // until the client closes
		_ = ws.CloseNow()
	}))
	ws, _, err := srv.Dial(context.Background(), "/")
	if err != nil {
		srv.Close()
		tb.Fatalf("carriertest: dial: %v", err)
	}
	tb.Cleanup(func() {
		_ = ws.CloseNow()
		<-done
		srv.Close()
	})
	return ws
}
