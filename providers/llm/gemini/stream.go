package gemini

import (
	"io"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/httpllm"
)

// endDetail begins the Disconnected detail of a body that ends cleanly
// before a finishReason came.
const endDetail = "stream ended before a finishReason"

// stream is one response: the shared stream core reading Gemini chunks
// with this package's decoder. Recv returns text, whole calls, then (at
// the end of the body) usage and the text parts' thought signatures as
// provider data, then LLMDone, then io.EOF.
type stream struct {
	httpllm.Stream
	dec decoder
}

var (
	_ providers.LLMStream = (*stream)(nil)
	_ httpllm.Decoder     = (*decoder)(nil)
)

// Decode decodes one chunk. There is no end-of-response event: the
// body's clean end is the end (End).
func (d *decoder) Decode(data []byte, events []providers.LLMEvent) ([]providers.LLMEvent, bool, error) {
	d.events = events
	err := d.decode(data)
	return d.events, false, err
}

// End: the body's clean end completes the response only when a
// finishReason came; then the usage and the signatures follow.
func (d *decoder) End(events []providers.LLMEvent) ([]providers.LLMEvent, error) {
	if !d.finished {
		return events, httpllm.Cut(endDetail, io.EOF)
	}
	d.events = events
	d.finish()
	return d.events, nil
}

// StopReason is the finishReason ("MAX_TOKENS" is providers.StopLength).
func (d *decoder) StopReason() string { return d.stop }
