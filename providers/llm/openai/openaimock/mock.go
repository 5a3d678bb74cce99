package openaimock

import (
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
)

// Response scripts the answer to one request (llmmock.Response). Its
// Lines are sent as "data: <line>\n\n", then "data: [DONE]" unless Cut;
// StallBefore len(Lines) stalls before [DONE].
type Response = llmmock.Response

// Server is the mock: the shared core with Chat Completions' routes,
// headers and framing. Its methods are safe for concurrent use. Events
// counts [DONE] too.
type Server struct{ *llmmock.Server }

// vendor is Chat Completions as the core serves it.
func vendor() llmmock.Vendor {
	return llmmock.Vendor{
		AuthHeader: "Authorization",
		BasePath:   "/v1",
		IsWarm:     func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == "/v1/models" },
		IsStream:   func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions" },
		WarmBody:   `{"object":"list","data":[{"id":"mock-model","object":"model"}]}`,
		NotFound:   `{"error":{"message":"not found"}}`,
		BadRequest: `{"error":{"message":"bad request body"}}`,
		Default:    Response{Lines: []string{TextChunk("ok")}},
		Frame: func(w io.Writer, line string) error {
			_, err := fmt.Fprintf(w, "data: %s\n\n", line)
			return err
		},
		Trailer: "[DONE]",
	}
}

// New starts a server on 127.0.0.1:0 answering with script in order; when
// the script runs out, the last Response repeats (a text "ok" when the
// script is empty). URL is the base URL, like https://api.openai.com/v1.
func New(script ...Response) *Server { return &Server{llmmock.New(vendor(), script...)} }

// NewWithListener is New serving on l instead of a loopback socket: a
// PipeListener, say, for a test in a testing/synctest bubble, where real
// sockets cannot be used. The server owns l and closes it in Close.
func NewWithListener(l net.Listener, script ...Response) *Server {
	return &Server{llmmock.NewWithListener(vendor(), l, script...)}
}
