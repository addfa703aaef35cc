//go:build integration

package integration

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
)

// TestCapture_QueryInsideAnExtendedBatchEndsTheSession: after an error in
// an extended-protocol batch the server ignores a simple Query up to the
// Sync and answers nothing for it. A proxy that expected an answer would
// pair later answers with the wrong statements and drop the intent of a
// committed write. No library sends a Query inside an open batch: the
// proxy ends such a session with a clear error, and the sessions after it
// are tracked as ever.
func TestCapture_QueryInsideAnExtendedBatchEndsTheSession(t *testing.T) {
	db := loadTestDB(t)
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, "cap_mix"))
	conn, fe := hijacked(t, db, c.Addr, "lethe-mix")
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	fe.Send(&pgproto3.Parse{Query: "SELECT 1/0"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Query{String: "INSERT INTO cap_mix (id, user_id) VALUES ('mixed', 'mix@example.com')"})
	fe.Send(&pgproto3.Sync{})
	require.NoError(t, fe.Flush())
	var fatal *pgproto3.ErrorResponse
	for {
		msg, err := fe.Receive()
		if err != nil {
			break // the proxy closed the connection
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok && e.Severity == "FATAL" {
			cp := *e
			fatal = &cp
		}
	}
	require.NotNil(t, fatal, "the session must end with a FATAL error")
	require.Equal(t, "08P01", fatal.Code)
	require.Contains(t, fatal.Message, "was sent inside an extended-protocol batch")

	direct := connect(t, db.URL(db.Addr(), ""))
	var n int
	require.NoError(t, direct.QueryRow(ctxT(t), "SELECT count(*) FROM cap_mix").Scan(&n))
	require.Zero(t, n, "the Query inside the batch never ran")

	conn2, fe2 := hijacked(t, db, c.Addr, "lethe-mix-2")
	defer conn2.Close()
	conn2.SetReadDeadline(time.Now().Add(30 * time.Second))
	for _, id := range []string{"b1", "b2", "b3"} {
		fe2.Send(&pgproto3.Query{String: "INSERT INTO cap_mix (id, user_id) VALUES ('" + id + "', 'mix@example.com')"})
		require.NoError(t, fe2.Flush())
		require.Empty(t, readToReady(t, fe2))
	}
	require.Equal(t, []string{"b1", "b2", "b3"}, c.confirmed(t, "public.cap_mix", "mix@example.com"))
}

// readToReady reads until ReadyForQuery and returns the error codes seen.
func readToReady(t *testing.T, fe *pgproto3.Frontend) []string {
	var codes []string
	for {
		msg, err := fe.Receive()
		require.NoError(t, err)
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			codes = append(codes, m.Code)
		case *pgproto3.ReadyForQuery:
			return codes
		}
	}
}
