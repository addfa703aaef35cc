package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClassifyTx(t *testing.T) {
	tests := []struct {
		sql  string
		want TxControl
	}{
		{"BEGIN", TxControl{Kind: TxBegin}},
		{"  begin isolation level serializable", TxControl{Kind: TxBegin}},
		{"START TRANSACTION READ WRITE", TxControl{Kind: TxBegin}},
		{"commit", TxControl{Kind: TxCommit}},
		{"END", TxControl{Kind: TxCommit}},
		{"/* c */ COMMIT; -- x", TxControl{Kind: TxCommit}},
		{"abort", TxControl{Kind: TxRollback}},
		{"ROLLBACK WORK", TxControl{Kind: TxRollback}},
		{"ROLLBACK TO SAVEPOINT sp1", TxControl{Kind: TxRollbackTo, Savepoint: "sp1"}},
		{"rollback transaction to \"My SP\"", TxControl{Kind: TxRollbackTo, Savepoint: "My SP"}},
		{"ROLLBACK TO Sp", TxControl{Kind: TxRollbackTo, Savepoint: "sp"}},
		{"SAVEPOINT a", TxControl{Kind: TxSavepoint, Savepoint: "a"}},
		{"RELEASE SAVEPOINT a", TxControl{Kind: TxRelease, Savepoint: "a"}},
		{"release a", TxControl{Kind: TxRelease, Savepoint: "a"}},
		{"COMMIT AND CHAIN", TxControl{Kind: TxCommit, Chain: true}},
		{"commit work and no chain", TxControl{Kind: TxCommit}},
		{"ROLLBACK TRANSACTION AND CHAIN", TxControl{Kind: TxRollback, Chain: true}},
		{"abort and chain", TxControl{Kind: TxRollback, Chain: true}},
		{"end and chain", TxControl{Kind: TxCommit, Chain: true}},
		{"PREPARE TRANSACTION 'x'", TxControl{Kind: TxPrepare}},
		{"COMMIT PREPARED 'x'", TxControl{Kind: TxEndPrepared}},
		{"ROLLBACK PREPARED 'x'", TxControl{Kind: TxEndPrepared}},
		{"PREPARE q AS SELECT 1", TxControl{}},
		{"INSERT INTO t VALUES (1)", TxControl{}},
		{"-- only a comment", TxControl{}},
		{"/* nested /* comment */ still */ BEGIN", TxControl{Kind: TxBegin}},
		{"", TxControl{}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, ClassifyTx(tc.sql), tc.sql)
	}
}

func TestClassifyTx_OtherStatementsDoNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		ClassifyTx("SELECT aid FROM pgbench_accounts WHERE aid = $1")
		ClassifyTx("  /* c */ INSERT INTO docs VALUES (1)")
	})
	assert.Zero(t, allocs)
}
