package adminclient

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// TestPrintAnswer_StatusListsOpenHorizons: forget status of a completed
// request prints its open horizons on stderr, one line each with when
// and why; a request still open prints none.
func TestPrintAnswer_StatusListsOpenHorizons(t *testing.T) {
	until := time.Date(2027, 3, 6, 10, 0, 0, 0, time.UTC)
	body := []byte(`{"request_id":"r1","status":"completed","layers":[],"open_horizons":[` +
		`{"store":"postgres","copy":"pg_wal","status":"conditional","basis":"until replication slot lethe_app advances past 0/3000148"},` +
		`{"store":"pinecone","copy":"provider_purge","status":"dated","until":"2027-03-06T10:00:00Z","basis":"90 days"}]}`)
	var stdout, stderr bytes.Buffer
	PrintAnswer("status", body, &stdout, &stderr)
	require.Contains(t, stdout.String(), `"open_horizons"`)
	require.Equal(t, "open horizons (copies of the deleted records still expected to exist):\n"+
		"  postgres pg_wal: conditional: until replication slot lethe_app advances past 0/3000148\n"+
		"  pinecone provider_purge: until 2027-03-06T10:00:00Z: 90 days\n", stderr.String())

	stderr.Reset()
	PrintOpenHorizons(engine.Status{Status: ledger.ForgetReceived, OpenHorizons: []engine.HorizonStatus{{Store: ledger.StorePostgres, Copy: "pg_wal", Status: connector.HorizonDated, Until: until}}}, &stderr)
	require.Empty(t, stderr.String())
	PrintOpenHorizons(engine.Status{Status: ledger.ForgetCompleted}, &stderr)
	require.Contains(t, stderr.String(), "open horizons: none")
}
