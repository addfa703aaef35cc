package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/lethe-privacy/lethe/certificate"
)

// Config is what every transport's server shares.
type Config struct {
	// References seals and opens subject references; every replica needs
	// the same key (NewReferences over LoadReferenceKey).
	References *References
	// Keys are the operator's trusted keys, pinned here for verify; nil
	// makes verify say how to configure them.
	Keys *certificate.KeySet
	// Logger receives one line per tool call (default slog.Default()).
	Logger *slog.Logger
	// Version is reported to clients as the server's version.
	Version string
}

// CheckpointURI is the transparency log's latest signed checkpoint, as a
// resource.
const CheckpointURI = "lethe://log/checkpoint"

const instructions = `Lethe erases a person's data from an application's vector stores and certifies it.
To erase: preview (shows what would be deleted and returns subject_ref and confirm_token), show the counts to a person, then forget with both; follow with status until completed; then certificate and verify.
Name people by subject_ref, never by their identifier, after the first preview. To check that every table and namespace holding people's data has a rule, call coverage.
Read-only tokens get status, certificate, verify and coverage only.`

// tools is one role's tools over the admin API. client returns the admin
// API client for a request (the caller's token over HTTP, the process's
// over stdio) and the caller's name for the log.
type tools struct {
	refs   *References
	keys   *certificate.KeySet
	log    *slog.Logger
	now    func() time.Time
	client func(extra *mcp.RequestExtra) (*adminclient.Client, error)
	caller func(extra *mcp.RequestExtra) string
}

// newServer is the MCP server a token of role is offered.
func newServer(cfg Config, role admin.Role, t *tools) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "lethe", Title: "Lethe: provable erasure", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: instructions})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	addTool(s, t, &mcp.Tool{Name: "status", Annotations: readOnly,
		Description: "Where a forget request stands: per table or namespace what was deleted, what remains, whether it is verified, and its deadline."}, t.status)
	addTool(s, t, &mcp.Tool{Name: "certificate", Annotations: readOnly,
		Description: "The signed deletion certificate of a completed forget request, byte for byte as signed."}, t.certificate)
	addTool(s, t, &mcp.Tool{Name: "verify", Annotations: readOnly,
		Description: "Verifies a deletion certificate (or a signed report) here, against the operator's pinned public keys, without trusting the server: the verdict and what it proves."}, t.verify)
	addTool(s, t, &mcp.Tool{Name: "coverage", Annotations: readOnly,
		Description: "Which tables and Pinecone namespaces have a capture rule, which are ignored (with the reason), and which have neither (uncovered: a forget cannot find what is written there), per store; and the transparency log's latest reconcile and retention runs. Names tables and namespaces only, never data."}, t.coverage)
	s.AddResource(&mcp.Resource{URI: CheckpointURI, Name: "checkpoint", MIMEType: "text/plain",
		Description: "The transparency log's latest signed checkpoint (c2sp.org/tlog-checkpoint): keep it to prove later that the log only grew."}, t.checkpoint)
	if role != admin.RoleOperator {
		return s
	}
	addTool(s, t, &mcp.Tool{Name: "preview", Annotations: readOnly,
		Description: "What erasing a person would delete, per table and namespace, and the confirm_token forget needs. Returns subject_ref: name the person by it from now on."}, t.preview)
	addTool(s, t, &mcp.Tool{Name: "forget", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
		Description: "Erases the person a preview showed, in every store, then verifies and certifies it. Needs the preview's subject_ref and confirm_token; ask a person to confirm the preview's counts first. Calling it again with the same confirm_token returns the same request."}, t.forget)
	addTool(s, t, &mcp.Tool{Name: "reverify", Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		Description: "Checks again that the person a completed forget erased is still absent from every store (the check is logged)."}, t.reverify)
	return s
}

func ptr[T any](v T) *T { return &v }

// addTool adds a tool whose calls are logged by name, caller, outcome and
// duration; never by arguments or results, which may hold personal data.
func addTool[In any](s *mcp.Server, t *tools, tool *mcp.Tool, h mcp.ToolHandlerFor[In, any]) {
	mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		start := t.now()
		res, out, err := h(ctx, req, in)
		attrs := []any{"tool", tool.Name, "caller", t.caller(req.Extra), "duration", t.now().Sub(start)}
		var ae *adminclient.APIError
		switch {
		case errors.As(err, &ae):
			attrs = append(attrs, "outcome", "refused", "status", ae.Status, "code", ae.Body.Code)
		case errors.Is(err, ErrReference):
			attrs = append(attrs, "outcome", "bad_reference")
		case err != nil:
			attrs = append(attrs, "outcome", "error")
		default:
			attrs = append(attrs, "outcome", "ok")
		}
		t.log.Info("mcp: tool call", attrs...)
		return res, out, err
	})
}

func (t *tools) checkpoint(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	client, err := t.client(req.Extra)
	if err != nil {
		return nil, err
	}
	note, err := client.Checkpoint(ctx)
	t.log.Info("mcp: resource read", "uri", CheckpointURI, "caller", t.caller(req.Extra), "ok", err == nil)
	if err != nil {
		return nil, fmt.Errorf("reading the log's checkpoint: %w", err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: CheckpointURI, MIMEType: "text/plain", Text: string(note)}}}, nil
}

func (cfg Config) logger() *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.Default()
}

// ForClient is the MCP server for the one admin API client a process holds
// (stdio, or an in-memory transport): the tools its token's role is
// offered, and that caller.
func ForClient(ctx context.Context, cfg Config, client *adminclient.Client) (*mcp.Server, admin.Caller, error) {
	if cfg.References == nil {
		return nil, admin.Caller{}, errors.New("mcpserver: Config.References is nil")
	}
	who, err := client.Whoami(ctx)
	if err != nil {
		return nil, admin.Caller{}, fmt.Errorf("asking the admin API who the token belongs to: %w", err)
	}
	t := &tools{refs: cfg.References, keys: cfg.Keys, log: cfg.logger(), now: time.Now,
		client: func(*mcp.RequestExtra) (*adminclient.Client, error) { return client, nil },
		caller: func(*mcp.RequestExtra) string { return who.Name },
	}
	return newServer(cfg, who.Role, t), who, nil
}

// ServeStdio serves the MCP server for client on stdin and stdout until
// ctx ends or the client hangs up.
func ServeStdio(ctx context.Context, cfg Config, client *adminclient.Client) error {
	s, who, err := ForClient(ctx, cfg, client)
	if err != nil {
		return err
	}
	cfg.logger().Info("mcp: serving on stdio", "caller", who.Name, "role", who.Role)
	return s.Run(ctx, &mcp.StdioTransport{})
}
