package opclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// MinToken is the shortest operator token: serve's MinOperatorToken.
const MinToken = 16

// DefaultTimeout bounds a request when Config.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// maxAnswer bounds an answer's body: the list of every node's calls is
// about 250 bytes a call.
const maxAnswer = 16 << 20

// maxMessage bounds the server's error text kept in an error.
const maxMessage = 300

// Config makes a Client.
type Config struct {
	// Addr is the serving node's base URL, http or https
	// (http://localhost:8000, serve's --addr); a path is a prefix
	// (a proxy's), the operator API being under Addr/operator/.
	Addr string
	// Token is the operator token (serve's --operator-token-env), at
	// least MinToken characters.
	Token string
	// HTTPClient sends the requests; nil: a client of the client's own
	// (Close closes its idle connections). Its Timeout, if any, also
	// bounds the event stream.
	HTTPClient *http.Client
	// Timeout bounds each request to its answer, and the event stream to
	// its first byte (default DefaultTimeout).
	Timeout time.Duration
}

// Validate checks the config; the error wraps ErrInvalidConfig and never
// holds the token.
func (c Config) Validate() error {
	_, err := c.base()
	if err != nil {
		return err
	}
	switch {
	case len(c.Token) < MinToken:
		return fmt.Errorf("%w: the operator token has %d characters, want at least %d", ErrInvalidConfig, len(c.Token), MinToken)
	case strings.ContainsFunc(c.Token, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("%w: the operator token holds a space or a control character", ErrInvalidConfig)
	case c.Timeout < 0:
		return fmt.Errorf("%w: timeout %v is negative", ErrInvalidConfig, c.Timeout)
	}
	return nil
}

// base parses Addr.
func (c Config) base() (*url.URL, error) {
	u, err := url.Parse(c.Addr)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("%w: address %q is not an http(s) URL like http://localhost:8000", ErrInvalidConfig, c.Addr)
	case u.User != nil:
		return nil, fmt.Errorf("%w: the address holds a user or password: the operator API takes its token only", ErrInvalidConfig)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%w: address %q has a query or fragment", ErrInvalidConfig, c.Addr)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Client is a client of one node's operator API. Safe for concurrent
// use.
type Client struct {
	base    *url.URL
	token   string
	hc      *http.Client
	own     *http.Transport
	timeout time.Duration
}

// New makes a client of the operator API at cfg.Addr. It does no I/O.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := cfg.base()
	c := &Client{base: base, token: cfg.Token, hc: cfg.HTTPClient, timeout: cfg.Timeout}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.hc == nil {
		c.own = http.DefaultTransport.(*http.Transport).Clone()
		c.hc = &http.Client{Transport: c.own}
	}
	return c, nil
}

// Addr is the address the client was made for.
func (c *Client) Addr() string { return c.base.String() }

// Close closes the idle connections of the client's own transport (none
// when Config.HTTPClient was given). The client may still be used.
func (c *Client) Close() {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
}

// target is what a request names, so that a 404 says which is unknown.
type target struct {
	call, node string
}

// List is every node's live calls, sorted by node then id.
func (c *Client) List(ctx context.Context) (*CallList, error) {
	var out CallList
	raw, err := c.call(ctx, http.MethodGet, []string{"calls"}, nil, target{}, &out, "calls")
	if err != nil {
		return nil, err
	}
	out.raw = raw
	return &out, nil
}

// Show is one live call: its summary, actor tree and turn timelines.
func (c *Client) Show(ctx context.Context, id string) (*CallDetail, error) {
	var out CallDetail
	raw, err := c.call(ctx, http.MethodGet, []string{"calls", id}, nil, target{call: id}, &out, "call", "tree")
	if err != nil {
		return nil, err
	}
	out.raw = raw
	return &out, nil
}

// Restart restarts one stage of a live call while the call goes on
// (*StageError for a stage the server does not know, ErrRefused when the
// call refuses, as it does while it ends).
func (c *Client) Restart(ctx context.Context, id, stage string) error {
	q := url.Values{"stage": {stage}}
	var out struct {
		Restarted string `json:"restarted"`
	}
	_, err := c.call(ctx, http.MethodPost, []string{"calls", id, "restart"}, q, target{call: id}, &out, "restarted")
	if err == nil && out.Restarted != stage {
		err = fmt.Errorf("%w: asked to restart %q, the server restarted %q", ErrProtocol, stage, out.Restarted)
	}
	return err
}

// Hangup ends a live call at once. The server answers when the hang-up
// is sent: the call leaves the list when its session has ended.
func (c *Client) Hangup(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodPost, []string{"calls", id, "hangup"}, nil, target{call: id}, nil, "hangup")
	return err
}

// Nodes lists the nodes, sorted by name.
func (c *Client) Nodes(ctx context.Context) (*NodeList, error) {
	var out NodeList
	raw, err := c.call(ctx, http.MethodGet, []string{"nodes"}, nil, target{}, &out, "nodes")
	if err != nil {
		return nil, err
	}
	out.raw = raw
	return &out, nil
}

// Drain stops a node admitting calls; its live calls go on to their end.
// The answer is the node as it is now.
func (c *Client) Drain(ctx context.Context, node string) (*NodeInfo, error) {
	return c.drain(ctx, http.MethodPost, node)
}

// Undrain lets a node drained by an operator admit calls again
// (ErrRefused while it shuts down).
func (c *Client) Undrain(ctx context.Context, node string) (*NodeInfo, error) {
	return c.drain(ctx, http.MethodDelete, node)
}

func (c *Client) drain(ctx context.Context, method, node string) (*NodeInfo, error) {
	var out NodeInfo
	if _, err := c.call(ctx, method, []string{"nodes", node, "drain"}, nil, target{node: node}, &out, "node"); err != nil {
		return nil, err
	}
	return &out, nil
}

// call sends one request of /operator/ and the path's elements, and
// decodes its JSON answer into out (when not nil), checking it holds the
// keys named. It returns the answer's body.
func (c *Client) call(ctx context.Context, method string, elems []string, q url.Values, t target, out any, keys ...string) (json.RawMessage, error) {
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := c.request(rctx, method, elems, q)
	if err != nil {
		return nil, err
	}
	path := req.URL.Path
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, method+" "+path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, c.transportError(ctx, method+" "+path, err)
	}
	if len(body) > maxAnswer {
		return nil, fmt.Errorf("%w: %s %s: the answer is longer than %d bytes", ErrProtocol, method, path, maxAnswer)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.answerError(resp, body, t)
	}
	if !isJSON(resp.Header.Get("Content-Type")) {
		return nil, fmt.Errorf("%w: %s %s answered %s with %s, not JSON", ErrProtocol, method, path, resp.Status, c.ctype(resp))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrProtocol, method, path, err)
	}
	for _, k := range keys {
		if _, ok := top[k]; !ok {
			return nil, fmt.Errorf("%w: %s %s: the answer has no %q", ErrProtocol, method, path, k)
		}
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return nil, fmt.Errorf("%w: %s %s: %v", ErrProtocol, method, path, err)
		}
	}
	return json.RawMessage(body), nil
}

// request makes a request of /operator/ and the path's elements (each
// escaped: a call id may hold any character) under the base URL, with
// the token.
func (c *Client) request(ctx context.Context, method string, elems []string, q url.Values) (*http.Request, error) {
	u := *c.base
	raw := c.base.EscapedPath() + "/operator"
	u.Path += "/operator"
	for _, e := range elems {
		u.Path += "/" + e
		raw += "/" + url.PathEscape(e)
	}
	u.RawPath = raw
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrInvalidConfig, method, u.Path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	return req, nil
}

// transportError is a request that got no answer: the caller's context
// ended (its error), the request's timeout passed, or the connection
// could not be made or broke (ErrUnreachable).
func (c *Client) transportError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("opclient: %s: %w", what, context.Cause(ctx))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: no answer within %v", ErrUnreachable, c.timeout)
	}
	return fmt.Errorf("%w: %s", ErrUnreachable, c.redact(err.Error()))
}

// apiError is the body of an error answer.
type apiError struct {
	Error  *string  `json:"error"`
	Stages []string `json:"stages"`
}

// answerError maps an error answer to the client's errors.
func (c *Client) answerError(resp *http.Response, body []byte, t target) error {
	var ae apiError
	jsonBody := isJSON(resp.Header.Get("Content-Type")) && json.Unmarshal(body, &ae) == nil && ae.Error != nil
	msg := resp.Status
	if jsonBody {
		msg = c.redact(*ae.Error)
	}
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized:
		return fmt.Errorf("%w: %s", ErrUnauthorized, msg)
	case !jsonBody && code == http.StatusNotFound:
		return fmt.Errorf("%w: %s answered %s with %s: no operator API there (serve mounts it with --operator-token-env)", ErrProtocol, resp.Request.URL.Path, resp.Status, c.ctype(resp))
	case !jsonBody:
		return fmt.Errorf("%w: %s answered %s with %s, not the operator API's JSON", ErrProtocol, resp.Request.URL.Path, resp.Status, c.ctype(resp))
	case code == http.StatusNotFound && t.call != "":
		return fmt.Errorf("%w: %s", ErrUnknownCall, msg)
	case code == http.StatusNotFound && t.node != "":
		return fmt.Errorf("%w: %s", ErrUnknownNode, msg)
	case code == http.StatusBadRequest && ae.Stages != nil:
		return &StageError{Stage: resp.Request.URL.Query().Get("stage"), Stages: ae.Stages}
	case code == http.StatusConflict:
		return fmt.Errorf("%w: %s", ErrRefused, msg)
	case code == http.StatusBadGateway, code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return fmt.Errorf("%w: %s", ErrNoAnswer, msg)
	default:
		return fmt.Errorf("%w: %s answered %s: %s", ErrProtocol, resp.Request.URL.Path, resp.Status, msg)
	}
}

// redact keeps the token out of a text the server or the network gave,
// and bounds its length.
func (c *Client) redact(s string) string {
	s = strings.ReplaceAll(s, c.token, "[token]")
	if r := []rune(s); len(r) > maxMessage {
		s = string(r[:maxMessage]) + "…"
	}
	return s
}

// ctype names an answer's content type for an error.
func (c *Client) ctype(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return "no content type"
	}
	return c.redact(ct)
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
