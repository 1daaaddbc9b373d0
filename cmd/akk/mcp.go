package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpBridge serves the daemon's MCP tools to a stdio client (an agent host
// that starts its MCP servers as commands). It holds no tool of its own:
// it opens one session on the daemon's /mcp with the CLI's token and
// forwards the tools, resources and notifications it finds there, so the
// daemon keeps every decision.
func (c *cli) mcpBridge(args []string) error {
	fs := newFlags("mcp")
	conversation := fs.String("conversation", c.getenv("AKK_CONVERSATION"), "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("usage: akk mcp [--conversation C]")
	}
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	hc := &http.Client{Transport: headers{base: http.DefaultTransport, set: map[string]string{
		"Authorization": "Bearer " + c.token, "AKK-Conversation": *conversation}}}

	var local *mcp.Server
	remoteClient := mcp.NewClient(&mcp.Implementation{Name: "akk-mcp-bridge", Version: version}, &mcp.ClientOptions{
		LoggingMessageHandler: func(ctx context.Context, r *mcp.LoggingMessageRequest) {
			for ss := range local.Sessions() {
				ss.Log(ctx, r.Params)
			}
		},
		ResourceUpdatedHandler: func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			local.ResourceUpdated(ctx, r.Params)
		},
	})
	remote, err := remoteClient.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.url + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		return fmt.Errorf("connect to %s/mcp: %w", c.url, err)
	}
	defer remote.Close()
	// The local client filters by its own level; the daemon sends all.
	if err := remote.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		return err
	}
	init := remote.InitializeResult()
	local = mcp.NewServer(&mcp.Implementation{Name: init.ServerInfo.Name, Title: init.ServerInfo.Title, Version: init.ServerInfo.Version},
		&mcp.ServerOptions{
			Instructions: init.Instructions,
			SubscribeHandler: func(ctx context.Context, r *mcp.SubscribeRequest) error {
				return remote.Subscribe(ctx, &mcp.SubscribeParams{URI: r.Params.URI})
			},
			UnsubscribeHandler: func(ctx context.Context, r *mcp.UnsubscribeRequest) error {
				return remote.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: r.Params.URI})
			},
			Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
		})
	for tool, err := range remote.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		local.AddTool(tool, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return remote.CallTool(ctx, &mcp.CallToolParams{Name: r.Params.Name, Arguments: r.Params.Arguments})
		})
	}
	for rt, err := range remote.ResourceTemplates(ctx, nil) {
		if err != nil {
			return err
		}
		local.AddResourceTemplate(rt, func(ctx context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return remote.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.Params.URI})
		})
	}
	return local.Run(ctx, &mcp.StdioTransport{})
}

// headers sets fixed headers (when not empty) on every request.
type headers struct {
	base http.RoundTripper
	set  map[string]string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.set {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"
