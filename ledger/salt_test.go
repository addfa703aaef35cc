package ledger

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

func TestSQLite_SaltContract(t *testing.T) { runSaltContract(t, sqliteBackend) }
func TestPostgres_SaltContract(t *testing.T) {
	testPGConnString(t)
	runSaltContract(t, pgBackend)
}

var otherHasher = func() *Hasher {
	h, err := NewHasher([]byte("another-salt-for-the-same-ledger-0123456789"))
	if err != nil {
		panic(err)
	}
	return h
}()

func TestSaltFingerprint_IsTheKeyedHashOfAFixedMessageAndDiffersPerSalt(t *testing.T) {
	salt := []byte("contract-test-salt-0123456789abcdef")
	m := hmac.New(sha256.New, salt)
	m.Write([]byte("lethe subject salt fingerprint v1"))
	fp := testHasher.SaltFingerprint()
	require.Equal(t, m.Sum(nil), fp[:])
	require.NotEqual(t, fp, otherHasher.SaltFingerprint())
	require.False(t, bytes.Contains(fp[:], salt[:8]), "the salt is not in its fingerprint")
	require.Len(t, fp.Short(), 8)
}

// runSaltContract pins what both backends do with the salt's fingerprint.
func runSaltContract(t *testing.T, b backend) {
	ctx := context.Background()
	keeper := func(l Ledger) SaltKeeper { return l.(SaltKeeper) }

	t.Run("FirstRecordWritesItAndSurvivesReopen", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		check, err := keeper(l).RecordSalt(ctx, testHasher)
		require.NoError(t, err)
		require.Equal(t, SaltRecorded, check)
		check, err = keeper(l).RecordSalt(ctx, testHasher)
		require.NoError(t, err)
		require.Equal(t, SaltMatched, check)
		require.NoError(t, l.Close())

		l = open(t)
		defer l.Close()
		check, err = keeper(l).CheckSalt(ctx, testHasher)
		require.NoError(t, err)
		require.Equal(t, SaltMatched, check)
	})

	t.Run("AnotherSaltIsRefusedAndChangesNothing", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		defer l.Close()
		_, err := keeper(l).RecordSalt(ctx, testHasher)
		require.NoError(t, err)
		for name, call := range map[string]func(context.Context, *Hasher) (SaltCheck, error){
			"RecordSalt": keeper(l).RecordSalt, "CheckSalt": keeper(l).CheckSalt,
		} {
			_, err = call(ctx, otherHasher)
			require.ErrorIs(t, err, ErrSaltMismatch, name)
			var mismatch *SaltMismatchError
			require.True(t, errors.As(err, &mismatch), name)
			require.Equal(t, testHasher.SaltFingerprint(), mismatch.Ledger)
			require.Equal(t, otherHasher.SaltFingerprint(), mismatch.Given)
			require.Contains(t, err.Error(), testHasher.SaltFingerprint().Short())
		}
		check, err := keeper(l).CheckSalt(ctx, testHasher)
		require.NoError(t, err)
		require.Equal(t, SaltMatched, check, "the ledger's fingerprint is the first salt's still")
	})

	t.Run("OpenAndCheckWithoutRecordWriteNothing", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		check, err := keeper(l).CheckSalt(ctx, otherHasher)
		require.NoError(t, err)
		require.Equal(t, SaltUnrecorded, check)
		require.NoError(t, l.Close())

		l = open(t)
		defer l.Close()
		check, err = keeper(l).RecordSalt(ctx, testHasher)
		require.NoError(t, err)
		require.Equal(t, SaltRecorded, check, "neither the open nor the check recorded a fingerprint")
	})

	t.Run("ALedgerWithRecordsButNoFingerprintRecordsOneAndSaysSo", func(t *testing.T) {
		for name, write := range map[string]func(t *testing.T, l Ledger){
			"confirmed": func(t *testing.T, l Ledger) {
				require.NoError(t, l.Confirm(ctx, intend(t, l, entry("public.docs", "1", "alice"))))
			},
			"pending": func(t *testing.T, l Ledger) { intend(t, l, entry("public.docs", "1", "alice")) },
		} {
			t.Run(name, func(t *testing.T) {
				open, _ := b.newStore(t)
				l := open(t)
				defer l.Close()
				write(t, l)
				check, err := keeper(l).RecordSalt(ctx, testHasher)
				require.NoError(t, err)
				require.Equal(t, SaltRecordedOnExisting, check)
				_, err = keeper(l).RecordSalt(ctx, otherHasher)
				require.ErrorIs(t, err, ErrSaltMismatch)
			})
		}
	})

	t.Run("ConcurrentRecordsAgreeOnOneFingerprint", func(t *testing.T) {
		open, _ := b.newStore(t)
		first := open(t)
		defer first.Close()
		second := open(t)
		defer second.Close()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, l := range []Ledger{first, second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = keeper(l).RecordSalt(ctx, []*Hasher{testHasher, otherHasher}[i])
			}()
		}
		wg.Wait()
		require.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one salt wins: %v", errs)
		for _, err := range errs {
			if err != nil {
				require.ErrorIs(t, err, ErrSaltMismatch)
			}
		}
	})
}

// A ledger written by a release before schema version 8 (SQLite) or 6
// (PostgreSQL) has records and no fingerprint: the first record after the
// upgrade says so.

func TestSQLite_UpgradedLedgerRecordsTheSaltOnFirstRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	require.NoError(t, err)
	require.NoError(t, migrateSQLiteTo(db, 7))
	_, err = db.Exec(`INSERT INTO entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
		VALUES ('postgres', 'public.docs', '1', ?, 0, 'confirmed', 1, 1000)`, hashBytes("alice"))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	l, err := OpenSQLite(path, Options{})
	require.NoError(t, err)
	defer l.Close()
	check, err := l.RecordSalt(context.Background(), testHasher)
	require.NoError(t, err)
	require.Equal(t, SaltRecordedOnExisting, check)
}

func TestPostgres_UpgradedLedgerRecordsTheSaltOnFirstRecord(t *testing.T) {
	conn := testPGConnString(t)
	schema := freshPGSchema(t, conn)
	s := pgx.Identifier{schema}.Sanitize()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, conn)
	require.NoError(t, err)
	defer pool.Close()
	old := &Postgres{pool: pool, schema: s}
	require.NoError(t, old.migrateTo(ctx, schema, 5))
	_, err = pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.tombstones (subject, request_id, created_at) VALUES ($1, 'req-1', now())`, s), hashBytes("alice"))
	require.NoError(t, err)

	l, err := OpenPostgres(ctx, conn, Options{Schema: schema})
	require.NoError(t, err)
	defer l.Close()
	check, err := l.RecordSalt(ctx, testHasher)
	require.NoError(t, err)
	require.Equal(t, SaltRecordedOnExisting, check)
}
