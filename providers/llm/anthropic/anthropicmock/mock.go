package anthropicmock

import (
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
)

// Response scripts the answer to one request (llmmock.Response). Its
// Lines are sent as "event: <its type>\ndata: <line>\n\n"; the response
// ends after the last line: script MessageStop for a clean end.
type Response = llmmock.Response

// Server is the mock: the shared core with the Messages API's routes,
// headers and framing. Its methods are safe for concurrent use.
type Server struct{ *llmmock.Server }

// vendor is the Messages API as the core serves it.
func vendor() llmmock.Vendor {
	return llmmock.Vendor{
		AuthHeader: "X-Api-Key",
		Headers:    []string{"Anthropic-Version"},
		IsWarm:     func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == "/v1/models" },
		IsStream:   func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/v1/messages" },
		WarmBody:   `{"data":[{"type":"model","id":"mock-model","display_name":"Mock"}],"has_more":false,"first_id":"mock-model","last_id":"mock-model"}`,
		NotFound:   ErrorBody("not_found_error", "not found"),
		BadRequest: ErrorBody("invalid_request_error", "bad request body"),
		Default:    Response{Lines: Text("ok")},
		Frame: func(w io.Writer, line string) error {
			var err error
			if typ := typeOf(line); typ != "" {
				_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, line)
			} else {
				_, err = fmt.Fprintf(w, "data: %s\n\n", line)
			}
			return err
		},
	}
}

// New starts a server on 127.0.0.1:0 answering with script in order; when
// the script runs out, the last Response repeats (a text "ok" when the
// script is empty). URL is the base URL, like https://api.anthropic.com.
func New(script ...Response) *Server { return &Server{llmmock.New(vendor(), script...)} }

// NewWithListener is New serving on l instead of a loopback socket: a
// PipeListener, say, for a test in a testing/synctest bubble, where real
// sockets cannot be used. The server owns l and closes it in Close.
func NewWithListener(l net.Listener, script ...Response) *Server {
	return &Server{llmmock.NewWithListener(vendor(), l, script...)}
}

// Versions returns the anthropic-version headers of all requests, in
// order.
func (s *Server) Versions() []string { return s.Header("Anthropic-Version") }
