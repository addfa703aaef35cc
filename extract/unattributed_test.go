package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnalyze_UnattributableWrites(t *testing.T) {
	r := testRules(t)
	cases := map[string]string{
		"MERGE":                `MERGE INTO docs d USING staging s ON d.id = s.id WHEN MATCHED THEN UPDATE SET user_id = s.user_id WHEN NOT MATCHED THEN INSERT (id, user_id) VALUES (s.id, s.user_id)`,
		"TRUNCATE":             `TRUNCATE other, docs`,
		"writable CTE insert":  `WITH x AS (INSERT INTO docs (id, user_id) VALUES ('a', 'u') RETURNING id) SELECT * FROM x`,
		"writable CTE delete":  `WITH x AS (DELETE FROM docs WHERE id = 'a' RETURNING *) INSERT INTO archive SELECT * FROM x`,
		"writable CTE update":  `WITH x AS (UPDATE docs SET body = 'b' RETURNING id) DELETE FROM other WHERE id IN (SELECT id FROM x)`,
		"COPY from file":       `COPY docs (id, user_id) FROM '/tmp/docs.csv' WITH (FORMAT csv)`,
		"COPY from program":    `COPY docs (id, user_id) FROM PROGRAM 'cat /tmp/x'`,
		"COPY no column list":  `COPY docs FROM STDIN`,
		"EXPLAIN ANALYZE":      `EXPLAIN (ANALYZE) INSERT INTO docs (id, user_id) SELECT id, user_id FROM staging`,
		"PREPARE of an insert": `PREPARE p (text, text) AS INSERT INTO docs (id, user_id) VALUES ($1, $2)`,
	}
	for name, sql := range cases {
		t.Run(name, func(t *testing.T) {
			as, err := r.Analyze(sql, nil)
			require.NoError(t, err)
			require.Len(t, as, 1)
			assert.Equal(t, KindUnattributed, as[0].Kind)
			tags, err := as[0].Tags(Params{})
			require.NoError(t, err)
			require.Len(t, tags, 1)
			assert.Equal(t, Tag{Table: "public.docs", Op: OpUnattributed, Reason: as[0].Reason}, tags[0])
			assert.NotEmpty(t, tags[0].Reason)
		})
	}
}

func TestAnalyze_IgnoresStatementsThatDoNotWriteConfiguredTables(t *testing.T) {
	r := testRules(t)
	for _, sql := range []string{
		`CREATE TABLE docs (id text PRIMARY KEY, user_id text)`,
		`SELECT * FROM docs WHERE user_id = $1`,
		`INSERT INTO other (id, user_id) VALUES ('a', 'u')`,
		`INSERT INTO private.docs (id, user_id) VALUES ('a', 'u')`,
		`UPDATE other SET user_id = 'u'`,
		`DELETE FROM other`,
		`COPY docs TO STDOUT`,
		`COPY (SELECT * FROM docs) TO STDOUT`,
		`EXPLAIN INSERT INTO docs (id, user_id) VALUES ('a', 'u')`,
		`WITH x AS (SELECT * FROM docs) SELECT * FROM x`,
		`DROP TABLE docs`,
		`BEGIN; SELECT 1; COMMIT`,
	} {
		t.Run(sql, func(t *testing.T) {
			as, err := r.Analyze(sql, nil)
			require.NoError(t, err)
			assert.Empty(t, as)
		})
	}
}

func TestAnalyze_OneAnalysisPerWritingStatement(t *testing.T) {
	r := testRules(t)
	as, err := r.Analyze(`BEGIN; INSERT INTO docs (id, user_id) VALUES ('a', 'u'); SELECT 1; DELETE FROM mem0 WHERE id = 'm'; COMMIT`, nil)
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.Equal(t, KindInsert, as[0].Kind)
	assert.Equal(t, "public.docs", as[0].Table)
	assert.Equal(t, KindDelete, as[1].Kind)
	assert.Equal(t, "public.mem0", as[1].Table)
}

func TestAnalyze_UnparsableIsAnError(t *testing.T) {
	r := testRules(t)
	_, err := r.Analyze(`INSERT INTO docs (id VALUES`, nil)
	assert.Error(t, err)
}

func TestAnalyze_DoesNotRetainStatementText(t *testing.T) {
	r := testRules(t)
	as, err := r.Analyze(`INSERT INTO docs (id, user_id, body) VALUES ($1, $2, 'a very long body that is not needed')`, nil)
	require.NoError(t, err)
	require.Len(t, as, 1)
	for _, rw := range as[0].rows {
		assert.Empty(t, rw.id.text)
		for _, v := range rw.cols {
			assert.Empty(t, v.text)
		}
	}
}
