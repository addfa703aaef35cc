package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/admin/adminclient"
)

// tokenKey holds the caller's bearer token in auth.TokenInfo.Extra, so that
// each tool call reaches the admin API as its caller.
const tokenKey = "admin_token"

// NewHTTPHandler is the MCP server on streamable HTTP, stateless: every
// POST carries the caller's admin API bearer token, is answered on its
// own, and may reach any replica. The token's role, asked of the admin API
// at adminURL on each request, decides the tools offered; a missing or
// unknown token is answered 401.
func NewHTTPHandler(cfg Config, adminURL string) (http.Handler, error) {
	if cfg.References == nil {
		return nil, errors.New("mcpserver: Config.References is nil")
	}
	if _, err := adminclient.NewWithToken(adminURL, "-"); err != nil {
		return nil, err
	}
	clientFor := func(extra *mcp.RequestExtra) (*adminclient.Client, error) {
		token, _ := callerToken(extra)
		return adminclient.NewWithToken(adminURL, token)
	}
	callerName := func(extra *mcp.RequestExtra) string {
		if extra != nil && extra.TokenInfo != nil {
			return extra.TokenInfo.UserID
		}
		return ""
	}
	servers := map[admin.Role]*mcp.Server{}
	for _, role := range []admin.Role{admin.RoleOperator, admin.RoleAuditor} {
		t := &tools{refs: cfg.References, keys: cfg.Keys, log: cfg.logger(), now: time.Now, client: clientFor, caller: callerName}
		servers[role] = newServer(cfg, role, t)
	}
	handler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		info := auth.TokenInfoFromContext(r.Context())
		if info == nil || len(info.Scopes) != 1 {
			return nil // not reached: RequireBearerToken answered 401
		}
		return servers[admin.Role(info.Scopes[0])]
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		client, err := adminclient.NewWithToken(adminURL, token)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		who, err := client.Whoami(ctx)
		if ae := (*adminclient.APIError)(nil); errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			return nil, fmt.Errorf("%w: the admin API does not know this bearer token; use an admin API token (an operator makes one with `lethe-proxy admin-token`)", auth.ErrInvalidToken)
		}
		if err != nil {
			return nil, fmt.Errorf("asking the admin API who the token belongs to: %w", err)
		}
		if servers[who.Role] == nil {
			return nil, fmt.Errorf("the admin API gave the token role %q, which lethe-proxy mcp does not know; are both the same version?", who.Role)
		}
		return &auth.TokenInfo{UserID: who.Name, Scopes: []string{string(who.Role)}, Extra: map[string]any{tokenKey: token}}, nil
	}
	return requireBearer(auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(handler)), nil
}

// requireBearer answers a request without a bearer token itself, saying
// which token to send, before the SDK's check.
func requireBearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "missing bearer token: send Authorization: Bearer <admin API token> (an operator makes one with `lethe-proxy admin-token`; an auditor's token gets the read-only tools)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func callerToken(extra *mcp.RequestExtra) (string, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return "", false
	}
	token, ok := extra.TokenInfo.Extra[tokenKey].(string)
	return token, ok
}

// ServeHTTP serves handler on addr under path "/mcp" until ctx ends, then
// shuts down gracefully.
func ServeHTTP(ctx context.Context, cfg Config, handler http.Handler, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: listening on %s: %w (is another process using it? change --listen)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		cfg.logger().Warn("mcp: LISTENING ON A NON-LOOPBACK ADDRESS WITHOUT TLS: admin API tokens cross the network in clear text; put a TLS-terminating proxy in front or listen on 127.0.0.1", "addr", ln.Addr().String())
	}
	cfg.logger().Info("mcp: serving streamable HTTP (stateless)", "addr", ln.Addr().String(), "path", "/mcp")
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("mcp: serving on %s: %w", addr, err)
	}
	return nil
}
