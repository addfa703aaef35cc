//go:build integration

package integration

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// pgbenchDB is a database of its own, so that pgbench's fixed table names
// (pgbench_*) cannot clash with a benchmark using them in the test database.
const pgbenchDB = "lethe_pgbench"

// TestPgbench uses pgbench as a correctness test, not a benchmark: 4 clients
// on 2 threads run 200 TPC-B-like transactions each through the proxy in
// every query mode (simple, extended, prepared). Every transaction must
// succeed, and afterwards the balances must add up as TPC-B demands.
func TestPgbench(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)

	conn := connect(t, db.DSN(db.Addr(), ""))
	var exists bool
	require.NoError(t, conn.QueryRow(ctxT(t), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", pgbenchDB).Scan(&exists))
	if !exists {
		_, err := conn.Exec(ctxT(t), fmt.Sprintf("CREATE DATABASE %s OWNER %s", pgbenchDB, db.User))
		var pgErr *pgconn.PgError
		if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P04") { // created meanwhile
			require.NoError(t, err)
		}
	}

	env := func(addr string) []string {
		return append(extEnv(db, addr, db.User, db.Password), "PGDATABASE="+pgbenchDB)
	}
	// Initialize directly; pgbench -i starts from scratch (zero balances, no history).
	res := extRun(t, "", env(db.Addr()), "pgbench", "-i", "-s", "1", "-q")
	require.Equal(t, 0, res.Exit, "%s", res)

	const clients, txPerClient = 4, 200
	processed := regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)/(\d+)$`)
	failed := regexp.MustCompile(`(?m)^number of failed transactions: (\d+) `)
	modes := []string{"simple", "extended", "prepared"}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			// -n: no vacuum, which would truncate pgbench_history.
			res := extRun(t, "", env(p.Addr), "pgbench", "-n", "-c", fmt.Sprint(clients), "-j", "2",
				"-t", fmt.Sprint(txPerClient), "-M", mode)
			require.Equal(t, 0, res.Exit, "%s", res)
			require.NotContains(t, strings.ToLower(res.Stderr), "error", "%s", res)
			require.Contains(t, res.Stdout, "query mode: "+mode, "%s", res)
			m := processed.FindStringSubmatch(res.Stdout)
			require.NotNil(t, m, "%s", res)
			want := fmt.Sprint(clients * txPerClient)
			require.Equal(t, []string{want, want}, m[1:], "transactions processed/expected")
			f := failed.FindStringSubmatch(res.Stdout)
			require.NotNil(t, f, "%s", res)
			require.Equal(t, "0", f[1], "failed transactions")
		})
	}

	// TPC-B bookkeeping: every transaction adds the same delta to one
	// account, teller and branch and logs it in the history.
	bconn := connect(t, db.DSN(db.Addr(), "dbname="+pgbenchDB)) // the later dbname wins
	var history, accounts int
	var sumDelta, sumA, sumT, sumB int64
	require.NoError(t, bconn.QueryRow(ctxT(t), `SELECT
		(SELECT count(*) FROM pgbench_history), (SELECT coalesce(sum(delta), 0) FROM pgbench_history),
		(SELECT count(*) FROM pgbench_accounts), (SELECT sum(abalance) FROM pgbench_accounts),
		(SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches)`).
		Scan(&history, &sumDelta, &accounts, &sumA, &sumT, &sumB))
	require.Equal(t, len(modes)*clients*txPerClient, history, "rows in pgbench_history")
	require.Equal(t, 100000, accounts, "pgbench_accounts at scale 1")
	require.Equal(t, sumDelta, sumA, "sum(abalance) = sum(delta)")
	require.Equal(t, sumDelta, sumT, "sum(tbalance) = sum(delta)")
	require.Equal(t, sumDelta, sumB, "sum(bbalance) = sum(delta)")
}
