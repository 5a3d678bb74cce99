package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// This file keeps the adapter's first decoder, on encoding/json, as the
// oracle of the differential fuzz target: the decoder of decode.go must
// give the same events and the same error kinds for every input (keys
// aside, which encoding/json matches without regard to case).

// Wire shapes of one streamed chunk (a GenerateContentResponse). Fields
// the adapter does not use are not declared, so the decoder skips them.
type (
	oracleChunk struct {
		Candidates    []oracleCandidate `json:"candidates"`
		UsageMetadata *oracleUsage      `json:"usageMetadata"`
		Error         *oracleAPIError   `json:"error"`
	}
	oracleCandidate struct {
		Content      oracleContent `json:"content"`
		FinishReason string        `json:"finishReason"`
	}
	oracleContent struct {
		Parts []oraclePart `json:"parts"`
	}
	oraclePart struct {
		Text             *string     `json:"text"`
		Thought          bool        `json:"thought"`
		ThoughtSignature string      `json:"thoughtSignature"`
		FunctionCall     *oracleCall `json:"functionCall"`
	}
	oracleCall struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	oracleUsage struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
	}
	oracleAPIError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	}
)

// oracleDecoder is the encoding/json decoder the adapter had before the
// jsonscan.Scanner one: FuzzDecoderMatchesOracle holds decoder to its events
// and error kinds. One per stream.
type oracleDecoder struct {
	events   []providers.LLMEvent
	calls    int // function calls so far
	sigs     []string
	sigLen   int
	usage    *oracleUsage // the last seen
	lastU    oracleUsage
	finished bool   // a finishReason seen
	stop     string // the finishReason, normalised
	key      string
}

// init readies the oracle for a response.
func (d *oracleDecoder) init() {
	d.calls, d.sigLen, d.finished, d.stop, d.usage = 0, 0, false, "", nil
	d.sigs = d.sigs[:0]
}

// decode appends the events of one chunk to d.events (which the caller
// empties). JSON that does not parse, or a chunk after a finishReason
// with content, is a *providers.Protocol; an error object is a
// *providers.Rejected with its code (a Protocol without a valid code).
func (d *oracleDecoder) decode(data []byte) error {
	var c oracleChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &providers.Protocol{Detail: "chunk is not valid JSON: " + err.Error()}
	}
	if c.Error != nil {
		msg := httpx.Excerpt([]byte(c.Error.Status+": "+c.Error.Message), d.key)
		if c.Error.Code < 400 || c.Error.Code > 599 {
			return &providers.Protocol{Detail: "error object without a valid code: " + msg}
		}
		return &providers.Rejected{Status: c.Error.Code, Detail: msg}
	}
	if c.UsageMetadata != nil {
		d.lastU = *c.UsageMetadata
		d.usage = &d.lastU
	}
	if len(c.Candidates) == 0 {
		return nil
	}
	cand := &c.Candidates[0]
	if d.finished && len(cand.Content.Parts) > 0 {
		return &providers.Protocol{Detail: "content after the finishReason"}
	}
	for i := range cand.Content.Parts {
		if err := d.part(&cand.Content.Parts[i]); err != nil {
			return err
		}
	}
	if r := cand.FinishReason; r != "" {
		d.finished = true
		d.stop = r
		if r == "MAX_TOKENS" {
			d.stop = providers.StopLength
		}
	}
	return nil
}

// part handles one part of a candidate's content.
func (d *oracleDecoder) part(p *oraclePart) error {
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		if fc.Name == "" {
			return &providers.Protocol{Detail: "functionCall without a name"}
		}
		if d.calls >= maxCalls {
			return &providers.Protocol{Detail: fmt.Sprintf("over %d function calls", maxCalls)}
		}
		args := bytes.TrimSpace(fc.Args)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		} else if args[0] != '{' {
			return &providers.Protocol{Detail: "functionCall args is not an object"}
		}
		id := fc.ID
		if id == "" {
			id = "gc" + strconv.Itoa(d.calls)
		}
		ev := providers.LLMEvent{Kind: providers.LLMToolCall, Index: d.calls, ID: id, Name: fc.Name, Args: string(args)}
		if p.ThoughtSignature != "" {
			sig, _ := json.Marshal(p.ThoughtSignature) // a string always encodes
			ev.ProviderData = sig
		}
		d.calls++
		d.events = append(d.events, ev)
	case p.Thought:
		// Thinking is never spoken; its signature, if any, rides along
		// with the text parts' ones.
		return d.keepSig(p.ThoughtSignature)
	case p.Text != nil:
		if *p.Text != "" {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMText, Text: *p.Text})
		}
		return d.keepSig(p.ThoughtSignature)
	}
	return nil
}

// keepSig keeps a text part's signature for the provider data.
func (d *oracleDecoder) keepSig(sig string) error {
	if sig == "" {
		return nil
	}
	d.sigLen += len(sig)
	if d.sigLen > maxSignatureBytes {
		return &providers.Protocol{Detail: fmt.Sprintf("thought signatures over %d bytes", maxSignatureBytes)}
	}
	d.sigs = append(d.sigs, sig)
	return nil
}

// finish appends the end-of-response events: the usage (the last seen),
// then the signatures as provider data.
func (d *oracleDecoder) finish() {
	if d.usage != nil {
		u := providers.LLMEvent{Kind: providers.LLMUsage}
		u.Usage.InputTokens, u.Usage.OutputTokens, u.Usage.CachedInputTokens = d.usage.PromptTokenCount, d.usage.CandidatesTokenCount, d.usage.CachedContentTokenCount
		d.events = append(d.events, u)
	}
	if len(d.sigs) > 0 {
		b, _ := json.Marshal(providerData{TextSignatures: d.sigs}) // strings always encode
		d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMProviderData, ProviderData: b})
	}
}
