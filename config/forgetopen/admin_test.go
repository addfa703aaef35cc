package forgetopen

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/engine/enginetest"
)

// A tokens file that cannot be read stops the start naming its key, and
// nothing is bound.
func TestListenAdmin_ATokensFileThatCannotBeReadNamesItsKey(t *testing.T) {
	cfg := &config.Config{}
	cfg.Forget.Admin.TokensFile = filepath.Join(t.TempDir(), "missing.json")
	cfg.Forget.Admin.Listen = "127.0.0.1:0"
	l, err := (&Forget{}).ListenAdmin(cfg, nil, nil, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "forget.admin.tokens_file: ") {
		t.Fatalf("listener %v, error %v; want the tokens file refused, naming forget.admin.tokens_file", l, err)
	}
}

// The listener reads the tokens file again when it changes: a token added
// after the start is accepted, with no restart.
func TestListenAdmin_ReadsTheTokensFileAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	_, first, err := admin.NewToken("cli5-first", admin.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.AppendToken(path, first); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{}
	cfg.Forget.Admin.TokensFile = path
	cfg.Forget.Admin.Listen = "127.0.0.1:0"
	rig := enginetest.New(t, time.Hour)
	l, err := (&Forget{Engine: rig.Engine}).ListenAdmin(cfg, nil, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- l.Serve(ctx) }()
	defer func() { cancel(); <-served }()

	secret, added, err := admin.NewToken("cli5-added", admin.RoleAuditor)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.AppendToken(path, added); err != nil {
		t.Fatal(err)
	}
	client, err := adminclient.NewWithToken("http://"+l.Addr().String(), secret)
	if err != nil {
		t.Fatal(err)
	}
	who, err := client.Whoami(ctx)
	if err != nil || who.Name != "cli5-added" {
		t.Fatalf("whoami with the token added after the start: %+v, %v; want cli5-added", who, err)
	}
}
