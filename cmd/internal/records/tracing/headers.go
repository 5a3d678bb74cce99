package tracing

import (
	"fmt"
	"net/url"
	"strings"
)

// ParseHeaders reads headers written as OTEL_EXPORTER_OTLP_HEADERS
// writes them, "key=value,key2=value2" (values percent-decoded, spaces
// around keys and values trimmed), as a variable named by the agent
// file's [tracing] headers_env holds them. Errors name the entry by its
// place, never its text: a value may be an API key.
func ParseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for i, entry := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(entry, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: tracing headers: entry %d is not key=value: write them as key=value,key2=value2", ErrInvalidConfig, i+1)
		}
		if !validHeaderName(k) {
			return nil, fmt.Errorf("%w: tracing headers: entry %d's name is not a valid HTTP header name (letters, digits and !#$%%&'*+-.^_`|~ only)", ErrInvalidConfig, i+1)
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("%w: tracing headers: the value of %q has a bad %%-escape: write a %% as %%25", ErrInvalidConfig, k)
		}
		out[k] = dv
	}
	return out, nil
}
