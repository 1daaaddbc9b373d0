// Package codexappserver is a client of Codex's own app-server: the managed
// daemon a Codex TUI (0.169.0 and later) starts per CODEX_HOME and talks to
// over a control socket. AKK attaches to a daemon that already runs as one
// more client; it never starts one.
//
// The control socket (<CODEX_HOME>/app-server-control/app-server-control.sock)
// speaks WebSocket over a Unix socket: one JSON-RPC message per text frame,
// without the "jsonrpc" member (plain JSON lines through it are refused).
package codexappserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// SocketPath is the control socket of a Codex home's managed daemon.
func SocketPath(codexHome string) string {
	return filepath.Join(codexHome, "app-server-control", "app-server-control.sock")
}

// ClientName is how AKK names itself to the daemon.
const ClientName = "akk"

// maxMessage bounds one message; the daemon says it sends up to 16 MiB
// unfragmented.
const maxMessage = 32 << 20

// ErrClosed: the connection ended (the daemon went away, or Close).
var ErrClosed = errors.New("app-server connection closed")

// RPCError is an error the daemon answered a request with.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("app-server error %d: %s", e.Code, e.Message) }

// Message is one notification or server request the daemon sent. ID is
// set for a server request (one the daemon waits on an answer to).
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// IsRequest reports whether the daemon waits on an answer to m.
func (m Message) IsRequest() bool { return len(m.ID) > 0 }

type wire struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

type reply struct {
	result json.RawMessage
	err    error
}

// Client is one connection to a daemon, initialized.
type Client struct {
	conn *websocket.Conn
	Info InitializeResponse

	mu      sync.Mutex
	next    int64
	pending map[string]chan reply
	subs    map[int]chan<- Message
	subNext int
	done    chan struct{}
	err     error
}

// InitializeResponse is what the daemon says of itself.
type InitializeResponse struct {
	UserAgent string `json:"userAgent"`
	CodexHome string `json:"codexHome"`
}

// Dial connects to the daemon at socket and initializes the connection.
// version is AKK's own, given in clientInfo.
func Dial(ctx context.Context, socket, version string) (*Client, error) {
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	conn, _, err := websocket.Dial(ctx, "ws://localhost/", &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("connect to the Codex app-server at %s: %w", socket, err)
	}
	conn.SetReadLimit(maxMessage)
	c := &Client{conn: conn, pending: map[string]chan reply{}, subs: map[int]chan<- Message{}, done: make(chan struct{})}
	go c.read()
	params := map[string]any{
		"clientInfo":   map[string]any{"name": ClientName, "title": "AKK", "version": version},
		"capabilities": map[string]any{"experimentalApi": true},
	}
	if err := c.Call(ctx, "initialize", params, &c.Info); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.notify(ctx, "initialized", nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialized: %w", err)
	}
	return c, nil
}

// Done is closed when the connection ends; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (nil while it lives).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection.
func (c *Client) Close() {
	c.conn.Close(websocket.StatusNormalClosure, "")
	<-c.done
}

// Subscribe delivers every notification and server request from now on to
// ch until stop is called. The reader waits on a full channel up to 5 s,
// then drops that message for that subscriber alone.
func (c *Client) Subscribe(ch chan<- Message) (stop func()) {
	c.mu.Lock()
	id := c.subNext
	c.subNext++
	c.subs[id] = ch
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// Call sends a request and decodes its result into out (nil: ignored).
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.next++
	id := fmt.Sprint(c.next)
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.write(ctx, message(json.RawMessage(id), method, params)); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if out != nil {
			if err := json.Unmarshal(r.result, out); err != nil {
				return fmt.Errorf("%s: decode result: %w", method, err)
			}
		}
		return nil
	case <-c.done:
		return c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) notify(ctx context.Context, method string, params any) error {
	return c.write(ctx, message(nil, method, params))
}

// message is a request (id set) or a notification on the wire.
func message(id json.RawMessage, method string, params any) map[string]any {
	msg := map[string]any{"method": method}
	if id != nil {
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	return msg
}

func (c *Client) write(ctx context.Context, msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.conn.Write(wctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}

func (c *Client) read() {
	var end error
	for {
		_, b, err := c.conn.Read(context.Background())
		if err != nil {
			end = fmt.Errorf("%w: %v", ErrClosed, err)
			break
		}
		var w wire
		if json.Unmarshal(b, &w) != nil {
			continue
		}
		if w.Method == "" && len(w.ID) > 0 {
			c.mu.Lock()
			ch := c.pending[string(w.ID)]
			c.mu.Unlock()
			if ch != nil {
				if w.Error != nil {
					ch <- reply{err: w.Error}
				} else {
					ch <- reply{result: w.Result}
				}
			}
			continue
		}
		if w.Method == "" {
			continue
		}
		m := Message{ID: w.ID, Method: w.Method, Params: w.Params}
		c.mu.Lock()
		subs := make([]chan<- Message, 0, len(c.subs))
		for _, s := range c.subs {
			subs = append(subs, s)
		}
		c.mu.Unlock()
		for _, s := range subs {
			select {
			case s <- m:
			case <-time.After(5 * time.Second):
				// A subscriber that stopped reading loses this message
				// rather than stall every other.
			}
		}
	}
	c.mu.Lock()
	c.err = end
	c.mu.Unlock()
	close(c.done)
}
