package httpllm

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers"
)

// vendorStream is a vendor's stream type: the core embedded beside its
// decoder.
type vendorStream struct {
	Stream
	dec textDecoder
}

// TestAdapterStream: a nil request and one the vendor cannot encode are
// its sentinels; otherwise the caller gets the vendor's stream.
// Mutations seen failing: the core Stream returned instead of the
// vendor's (the identity check); Body's error not wrapped in
// InvalidRequest.
func TestAdapterStream(t *testing.T) {
	errNil, errBad := errors.New("nil request"), errors.New("invalid request")
	errSchema := errors.New("schema is not JSON")
	synctest.Test(t, func(t *testing.T) {
		cl, _ := served(t, func(w http.ResponseWriter, r *http.Request) { eventStream(w, r, sse("a", "done"), 0, "") })
		var made *vendorStream
		a := NewAdapter(AdapterConfig{
			Client: cl.cfg, Name: "test.Adapter", StreamURL: testURL, WarmURL: testURL,
			NilRequest: errNil, InvalidRequest: errBad,
			Body: func(req *providers.Request) ([]byte, error) {
				if len(req.Tools) > 0 {
					return nil, errSchema
				}
				return []byte(`{}`), nil
			},
			NewStream: func() (providers.LLMStream, *Stream, Decoder) {
				made = &vendorStream{}
				return made, &made.Stream, &made.dec
			},
		})
		defer a.Close()
		if _, err := a.Stream(t.Context(), nil); !errors.Is(err, errNil) {
			t.Fatalf("nil request: %v", err)
		}
		if _, err := a.Stream(t.Context(), &providers.Request{Tools: []providers.ToolDef{{}}}); !errors.Is(err, errBad) || err.Error() != "invalid request: schema is not JSON" {
			t.Fatalf("bad request: %v", err)
		}
		s, err := a.Stream(t.Context(), &providers.Request{})
		if err != nil {
			t.Fatal(err)
		}
		if s != providers.LLMStream(made) {
			t.Fatalf("Stream returned %T, not the vendor's stream", s)
		}
		if got, err := drain(t, s); err != nil || len(got) != 2 {
			t.Fatalf("events %q, err %v", got, err)
		}
		if fmt.Sprintf("%v %#v", a, a) != "test.Adapter test.Adapter" {
			t.Fatalf("prints %v %#v", a, a)
		}
	})
}
