package tracing

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/rs/zerolog"
)

// DefaultServiceName is the service.name of the exported resource unless
// Config.ServiceName says otherwise.
const DefaultServiceName = "brisvox"

// tracesPath is the OTLP/HTTP receiver's path for traces, appended to an
// endpoint given without a path.
const tracesPath = "/v1/traces"

// Config sets up a Tracer.
type Config struct {
	// Endpoint is the OTLP/HTTP receiver: http://127.0.0.1:4318 (its
	// traces path, /v1/traces, is added to a URL without a path) or a
	// full URL such as https://collector.example/v1/traces. Required:
	// tracing is off unless an endpoint is set.
	Endpoint string
	// Headers are sent with every export (a vendor's API key). They may
	// hold secrets: never logged, never in an error.
	Headers map[string]string
	// ServiceName is the resource's service.name; default "brisvox".
	ServiceName string
	// Node is the resource's service.instance.id: the node's name.
	Node string
	Log  zerolog.Logger
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.ServiceName == "" {
		c.ServiceName = DefaultServiceName
	}
	return c
}

// Validate says what is wrong with c, if anything.
func (c Config) Validate() error {
	_, err := c.exportURL()
	if err != nil {
		return err
	}
	for k, v := range c.Headers {
		if !validHeaderName(k) {
			return fmt.Errorf("%w: header name %q is not a valid HTTP header name (letters, digits and !#$%%&'*+-.^_`|~ only)", ErrInvalidConfig, k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			// The value may be a key: name the header, not the value.
			return fmt.Errorf("%w: the value of header %q holds a line break or NUL: give it on one line", ErrInvalidConfig, k)
		}
	}
	return nil
}

// exportURL is the URL the exporter posts to.
func (c Config) exportURL() (string, error) {
	if c.Endpoint == "" {
		return "", fmt.Errorf("%w: no OTLP endpoint: tracing is off unless one is set (the collector's OTLP/HTTP address, such as http://127.0.0.1:4318)", ErrInvalidConfig)
	}
	if !strings.Contains(c.Endpoint, "://") {
		return "", fmt.Errorf("%w: OTLP endpoint has no scheme: use http:// or https:// before the address (http://127.0.0.1:4318)", ErrInvalidConfig)
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		// The url.Error's own text repeats the URL (credentials and all).
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("%w: OTLP endpoint is not a URL (%v): give one such as http://127.0.0.1:4318", ErrInvalidConfig, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%w: OTLP endpoint scheme %q: use http:// or https:// (the exporter speaks OTLP over HTTP)", ErrInvalidConfig, u.Scheme)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%w: OTLP endpoint has no host: give one such as http://127.0.0.1:4318", ErrInvalidConfig)
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: OTLP endpoint holds credentials: put them in a header (tracing headers) instead of the URL", ErrInvalidConfig)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: OTLP endpoint has a query or fragment: give the receiver's URL without them", ErrInvalidConfig)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = tracesPath
	}
	return u.String(), nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
