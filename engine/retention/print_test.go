package retention

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lethe-privacy/lethe/ledger"
)

// Each layer's status says whether it failed, left expired records,
// was only counted, or is done.
func TestResult_WriteTextStatusPerLayer(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	res := Result{RunID: "sweep-1", At: at, Layers: []Layer{
		{Store: ledger.StorePostgres, Table: "public.a", Cutoff: at, Expired: 3, Deleted: 3},
		{Store: ledger.StorePostgres, Table: "public.b", Cutoff: at, Expired: 2, Deleted: 1, Residual: 1},
		{Store: ledger.StorePinecone, Table: "docs/c", Cutoff: at, Err: errors.New("unreachable")},
	}}
	var out bytes.Buffer
	res.WriteText(&out, false)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "sweep sweep-1 at 2026-06-01T12:00:00Z", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "STORE "), lines[1])
	assert.True(t, strings.HasSuffix(lines[2], " ok"), lines[2])
	assert.True(t, strings.HasSuffix(lines[3], " left"), lines[3])
	assert.True(t, strings.HasSuffix(lines[4], " failed"), lines[4])

	out.Reset()
	res.Layers = res.Layers[:1]
	res.WriteText(&out, true)
	assert.True(t, strings.HasPrefix(out.String(), "dry run sweep-1 at 2026-06-01T12:00:00Z: nothing was deleted\n"), out.String())
	assert.True(t, strings.HasSuffix(strings.TrimSpace(out.String()), " counted"), out.String())
}

// A failed layer says why, and records without a readable retain_by are
// counted as kept.
func TestResult_WriteWarnings(t *testing.T) {
	res := Result{Layers: []Layer{
		{Table: "public.a"},
		{Table: "public.b", Err: errors.New("connection reset")},
		{Table: "public.c", Unreadable: 2},
	}}
	var out bytes.Buffer
	res.WriteWarnings(&out, "lethe-proxy sweep: ")
	assert.Equal(t, "lethe-proxy sweep: public.b: connection reset\n"+
		"lethe-proxy sweep: warning: public.c: 2 records have no readable retain_by (NULL, or not a time) and are kept; fix them or delete them yourself\n", out.String())
}
