package forgetopen

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/enginetest"
)

// coverWing is a wing whose only working part is its coverage check, which
// records the policy it was given.
type coverWing struct {
	connector.Wing
	policies chan coverage.Policy
}

func (w coverWing) Name() string { return coverage.StorePostgres }

func (w coverWing) Coverage(ctx context.Context, p coverage.Policy) (coverage.Report, error) {
	w.policies <- p
	return coverage.Report{TablesChecked: 4}, nil
}

// The admin listener's GET /v1/coverage runs every wing's check with the
// configuration's coverage policy.
func TestListenAdmin_CoverageRunsTheWingsChecksWithTheConfiguredPolicy(t *testing.T) {
	cfg, err := config.Parse("lethe.yaml", []byte(`postgres: {upstream: "db:5432"}
capture:
  wal: off
  database: app
  tables:
    - {table: cover_docs, id: id, subjects: [owner]}
coverage:
  ignore:
    - {table: public.cover_manuals, reason: public manuals}
`))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokens.json")
	secret, tok, err := admin.NewToken("cover-auditor", admin.RoleAuditor)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.AppendToken(path, tok); err != nil {
		t.Fatal(err)
	}
	cfg.Forget.Admin.TokensFile = path
	cfg.Forget.Admin.Listen = "127.0.0.1:0"
	rig := enginetest.New(t, time.Hour)
	wing := coverWing{policies: make(chan coverage.Policy, 1)}
	l, err := (&Forget{Engine: rig.Engine}).ListenAdmin(cfg, nil, []connector.Wing{wing}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- l.Serve(ctx) }()
	defer func() { cancel(); <-served }()

	req, err := http.NewRequest(http.MethodGet, "http://"+l.Addr().String()+"/v1/coverage", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s coverage.Survey
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/coverage: %d, %v", resp.StatusCode, err)
	}
	var p coverage.Policy
	select {
	case p = <-wing.policies: // the check ran before the answer was sent
	default:
		t.Fatalf("GET /v1/coverage answered %+v without running the wing's check", s)
	}
	if len(p.Tables) != 1 || p.Tables[0].Table != "public.cover_docs" {
		t.Errorf("the wing was given the rules %+v; want the configuration's public.cover_docs", p.Tables)
	}
	if len(s.Stores) != 1 || s.Stores[0].TablesChecked != 4 || len(s.Stores[0].Rules) != 1 || len(s.Stores[0].Ignored) != 1 ||
		s.Stores[0].Ignored[0].Table != "public.cover_manuals" {
		t.Errorf("survey %+v; want the wing's report with its one rule and one ignore", s.Stores)
	}
}
