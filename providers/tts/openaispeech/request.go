package openaispeech

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// speechRequest is the JSON body of POST {base}/audio/speech.
type speechRequest struct {
	Model          string  `json:"model"`
	Input          string  `json:"input"`
	Voice          string  `json:"voice"`
	ResponseFormat string  `json:"response_format"`
	Speed          float64 `json:"speed,omitempty"`
	Instructions   string  `json:"instructions,omitempty"`
}

// requestBody is the JSON body speaking input.
func requestBody(cfg *Config, input string) ([]byte, error) {
	return json.Marshal(speechRequest{Model: cfg.Model, Input: input, Voice: cfg.Voice,
		ResponseFormat: cfg.Format, Speed: cfg.Speed, Instructions: cfg.Instructions})
}

// takeInput splits the first request's input off queued: all of it when it
// holds at most maxRunes runes, else the runes up to the last white space
// before the bound (or exactly maxRunes runes when a word is longer).
func takeInput(queued string, maxRunes int) (input, rest string) {
	if utf8.RuneCountInString(queued) <= maxRunes {
		return queued, ""
	}
	cut, n := 0, 0
	for i := range queued {
		if n == maxRunes {
			cut = i
			break
		}
		n++
	}
	if sp := strings.LastIndexFunc(queued[:cut], unicode.IsSpace); sp > 0 {
		_, size := utf8.DecodeRuneInString(queued[sp:])
		cut = sp + size
	}
	return queued[:cut], queued[cut:]
}
