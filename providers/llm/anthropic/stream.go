package anthropic

import (
	"io"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/httpllm"
)

// stream is one response: the shared stream core reading Messages API
// events with this package's decoder. Recv returns text, call fragments,
// usage and the thinking blocks as provider data, then LLMDone, then
// io.EOF.
type stream struct {
	httpllm.Stream
	dec decoder
}

var (
	_ providers.LLMStream = (*stream)(nil)
	_ httpllm.Decoder     = (*decoder)(nil)
)

// Decode decodes one event; message_stop is the end of the response.
func (d *decoder) Decode(data []byte, events []providers.LLMEvent) ([]providers.LLMEvent, bool, error) {
	d.events = events
	err := d.decode(data)
	return d.events, err == nil && d.stopped, err
}

// End: the body may not end before message_stop.
func (d *decoder) End(events []providers.LLMEvent) ([]providers.LLMEvent, error) {
	return events, httpllm.Cut(cutDetail, io.EOF)
}

// StopReason is message_delta's stop_reason ("max_tokens" is
// providers.StopLength).
func (d *decoder) StopReason() string { return d.stop }
