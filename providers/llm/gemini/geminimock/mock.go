package geminimock

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
)

// Response scripts the answer to one request (llmmock.Response). Its
// Lines are sent as "data: <line>\r\n\r\n" (the service ends its lines in
// CRLF); end with a chunk holding a finishReason (Finish) for a complete
// response.
type Response = llmmock.Response

// Server is the mock: the shared core with the Gemini API's routes,
// headers and framing. Its methods are safe for concurrent use; Paths
// returns the request URIs (path and query).
type Server struct{ *llmmock.Server }

// vendor is streamGenerateContent as the core serves it.
func vendor() llmmock.Vendor {
	return llmmock.Vendor{
		AuthHeader: "X-Goog-Api-Key",
		IsWarm:     func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == "/v1beta/models" },
		IsStream: func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/") &&
				strings.HasSuffix(r.URL.Path, ":streamGenerateContent") && r.URL.Query().Get("alt") == "sse"
		},
		WarmBody:   `{"models":[{"name":"models/mock-model","displayName":"Mock"}]}`,
		NotFound:   ErrorBody(404, "NOT_FOUND", "not found"),
		BadRequest: ErrorBody(400, "INVALID_ARGUMENT", "bad request body"),
		Default:    Response{Lines: Text("ok")},
		Frame: func(w io.Writer, line string) error {
			_, err := fmt.Fprintf(w, "data: %s\r\n\r\n", line)
			return err
		},
	}
}

// New starts a server on 127.0.0.1:0 answering with script in order; when
// the script runs out, the last Response repeats (a text "ok" when the
// script is empty). URL is the base URL, without /v1beta.
func New(script ...Response) *Server { return &Server{llmmock.New(vendor(), script...)} }

// NewWithListener is New serving on l instead of a loopback socket: a
// PipeListener, say, for a test in a testing/synctest bubble, where real
// sockets cannot be used. The server owns l and closes it in Close.
func NewWithListener(l net.Listener, script ...Response) *Server {
	return &Server{llmmock.NewWithListener(vendor(), l, script...)}
}
