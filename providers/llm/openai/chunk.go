package openai

import (
	"fmt"
	"github.com/brisvox/brisvox/providers/internal/jsonscan"
	"strconv"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// decoder turns chunk data into events. It reads each chunk in place with
// a jsonscan.Scanner: fields the adapter does not use are skipped (checked,
// not kept) and nothing is allocated but the strings of the events. Its
// buffers are reused from chunk to chunk.
type decoder struct {
	scan   jsonscan.Scanner
	events []providers.LLMEvent
	finish string // the last finish_reason seen
	key    string // redacted from error details
}

// chunkNotes is what a chunk says besides its events, acted on once the
// whole chunk has been read (the members of an object come in any order).
type chunkNotes struct {
	usageSet bool
	errSet   bool
	errMsg   []byte
	errCode  []byte
	badIndex int // a negative tool call index of choice 0, or 0
	hasBad   bool
}

// decode appends the events of one chunk's JSON to d.events (which the
// caller empties). Text comes first, then the call fragments in their
// order, then usage. JSON that does not parse is a *providers.Protocol; an
// error object in the stream is a *providers.Rejected.
func (d *decoder) decode(data []byte) error {
	s := &d.scan
	s.Reset(data)
	var n chunkNotes
	var usage providers.Usage
	if s.Object() {
		for s.More() {
			switch string(s.Key()) {
			case "choices":
				if s.Array() {
					for s.More() {
						d.choice(&n)
					}
				}
			case "usage":
				if s.Object() {
					n.usageSet = true
					readUsage(s, &usage)
				}
			case "error":
				if s.Object() {
					n.errSet = true
					for s.More() {
						switch string(s.Key()) {
						case "message":
							n.errMsg = append(n.errMsg[:0], s.StrBytes()...)
						case "code":
							n.errCode = s.Raw()
						default:
							s.Skip()
						}
					}
				}
			default:
				s.Skip()
			}
		}
	}
	if err := s.Done(); err != nil {
		return &providers.Protocol{Detail: "chunk is not valid JSON: " + err.Error()}
	}
	if n.errSet {
		status := 500 // an error in a stream that began well: the server's
		if c, err := strconv.Atoi(string(n.errCode)); err == nil && c >= 400 && c <= 599 {
			status = c
		}
		return &providers.Rejected{Status: status, Detail: httpx.Excerpt(n.errMsg, d.key)}
	}
	if n.hasBad {
		return &providers.Protocol{Detail: fmt.Sprintf("tool call index %d", n.badIndex)}
	}
	if n.usageSet {
		d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMUsage, Usage: usage})
	}
	return nil
}

// choice reads one element of choices. Only choice 0 is ours (one answer
// is asked for); as its index may come after its delta, the events are
// appended as they come and dropped at the end if it is another choice.
func (d *decoder) choice(n *chunkNotes) {
	s := &d.scan
	if !s.Object() {
		return // null: the zero choice, which says nothing
	}
	mark := len(d.events)
	index, finish := 0, ""
	text := ""
	badIndex, hasBad := 0, false
	for s.More() {
		switch string(s.Key()) {
		case "index":
			index = s.Int()
		case "finish_reason":
			finish = s.Str()
		case "delta":
			if !s.Object() {
				continue
			}
			for s.More() {
				switch string(s.Key()) {
				case "content":
					text = s.Str()
				case "tool_calls":
					if s.Array() {
						for s.More() {
							if i, bad := d.toolCall(); bad && !hasBad {
								badIndex, hasBad = i, true
							}
						}
					}
				default:
					s.Skip()
				}
			}
		default:
			s.Skip()
		}
	}
	if index != 0 {
		d.events = d.events[:mark]
		return
	}
	if text != "" {
		// The text of a delta goes before its call fragments.
		d.events = append(d.events, providers.LLMEvent{})
		copy(d.events[mark+1:], d.events[mark:])
		d.events[mark] = providers.LLMEvent{Kind: providers.LLMText, Text: text}
	}
	if hasBad && !n.hasBad {
		n.badIndex, n.hasBad = badIndex, true
	}
	if finish != "" {
		d.finish = finish
	}
}

// toolCall reads one tool call fragment and appends its event; a negative
// index is reported, not appended.
func (d *decoder) toolCall() (index int, bad bool) {
	s := &d.scan
	if !s.Object() {
		d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMToolCall})
		return 0, false
	}
	ev := providers.LLMEvent{Kind: providers.LLMToolCall}
	for s.More() {
		switch string(s.Key()) {
		case "index":
			ev.Index = s.Int()
		case "id":
			ev.ID = s.Str()
		case "function":
			if !s.Object() {
				continue
			}
			for s.More() {
				switch string(s.Key()) {
				case "name":
					ev.Name = s.Str()
				case "arguments":
					ev.Args = s.Str()
				default:
					s.Skip()
				}
			}
		default:
			s.Skip()
		}
	}
	if ev.Index < 0 {
		return ev.Index, true
	}
	d.events = append(d.events, ev)
	return 0, false
}

// readUsage reads a usage object (entered).
func readUsage(s *jsonscan.Scanner, u *providers.Usage) {
	for s.More() {
		switch string(s.Key()) {
		case "prompt_tokens":
			u.InputTokens = s.Int()
		case "completion_tokens":
			u.OutputTokens = s.Int()
		case "prompt_tokens_details":
			if s.Object() {
				for s.More() {
					if string(s.Key()) == "cached_tokens" {
						u.CachedInputTokens = s.Int()
					} else {
						s.Skip()
					}
				}
			}
		default:
			s.Skip()
		}
	}
}
