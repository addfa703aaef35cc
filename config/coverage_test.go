package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const coverageBase = "postgres:\n  upstream: db:5432\ncapture:\n  wal: off\n  database: app\n  tables:\n    - {table: public.docs, id: id, subjects: [user_id], retain: 90d, retain_by: created_at}\n"

func TestParse_CoverageDefaultsToReportWithTheUsualSubjectNames(t *testing.T) {
	cfg, err := Parse("cfg.yaml", []byte(coverageBase))
	require.NoError(t, err)
	assert.Equal(t, CoverageReport, cfg.Coverage.Mode)
	assert.Equal(t, 90*24*time.Hour, cfg.Capture.Tables[0].Retain.D())
	assert.Equal(t, "created_at", cfg.Capture.Tables[0].RetainBy)
	for _, name := range []string{"user_id", "Billing_User_ID", "email", "customer_id"} {
		assert.True(t, cfg.Coverage.LooksLikeSubject(name), name)
	}
	for _, name := range []string{"id", "embedding", "user_idx", "created_at"} {
		assert.False(t, cfg.Coverage.LooksLikeSubject(name), name)
	}
}

func TestParse_IgnoreRulesAreFoundByTableAndNamespace(t *testing.T) {
	src := coverageBase + "coverage:\n  mode: enforce\n  ignore:\n" +
		"    - {table: public.faq, reason: public help articles}\n" +
		"    - {index: docs, namespace: __default__, reason: product manuals}\n"
	cfg, err := Parse("cfg.yaml", []byte(src))
	require.NoError(t, err)
	require.Len(t, cfg.Coverage.Ignore, 2)
	assert.Equal(t, IgnoreRule{Table: "public.faq", Reason: "public help articles"}, cfg.Coverage.Ignore[0])
	_, ok := cfg.Coverage.IgnoredNamespace("docs", "")
	assert.True(t, ok, `"" is the default namespace`)
	_, ok = cfg.Coverage.IgnoredNamespace("docs", "tenant-a")
	assert.False(t, ok)
}

func TestParse_CoverageAndRetentionErrorsSayWhatToWrite(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"bad mode", coverageBase + "coverage:\n  mode: strict\n", []string{"coverage.mode", "report, enforce"}},
		{"ignore without reason", coverageBase + "coverage:\n  ignore:\n    - table: public.faq\n", []string{"coverage.ignore[0]", "reason is missing"}},
		{"ignore without schema", coverageBase + "coverage:\n  ignore:\n    - {table: faq, reason: x}\n", []string{"public.faq"}},
		{"ignore of a ruled table", coverageBase + "coverage:\n  ignore:\n    - {table: public.docs, reason: x}\n", []string{"capture rule and an ignore"}},
		{"ignore of nothing", coverageBase + "coverage:\n  ignore:\n    - {reason: x}\n", []string{"name what is ignored"}},
		{"ignore twice", coverageBase + "coverage:\n  ignore:\n    - {index: docs, namespace: '', reason: x}\n    - {index: docs, namespace: __default__, reason: y}\n", []string{"ignored twice"}},
		{"bad pattern", coverageBase + "coverage:\n  subject_columns: ['[user']\n", []string{"coverage.subject_columns[0]", "not a name pattern"}},
		{"retain without retain_by", "postgres:\n  upstream: db:5432\ncapture:\n  wal: off\n  database: app\n  tables:\n    - {table: public.t, id: id, subjects: [u], retain: 30d}\n", []string{"capture.tables[0]", "retain without retain_by"}},
		{"retain_by without retain", "postgres:\n  upstream: db:5432\ncapture:\n  wal: off\n  database: app\n  tables:\n    - {table: public.t, id: id, subjects: [u], retain_by: at}\n", []string{"retain: 90d"}},
		{"retain in seconds", "postgres:\n  upstream: db:5432\ncapture:\n  wal: off\n  database: app\n  tables:\n    - {table: public.t, id: id, subjects: [u], retain: 90s, retain_by: at}\n", []string{"shorter than 1h"}},
		{"retain not a duration", "postgres:\n  upstream: db:5432\ncapture:\n  wal: off\n  database: app\n  tables:\n    - {table: public.t, id: id, subjects: [u], retain: 3 months, retain_by: at}\n", []string{"is not a duration", "90d"}},
		{"namespace retain without retain_by", "pinecone:\n  indexes:\n    - name: docs\n      host: http://127.0.0.1:5080\n      namespaces:\n        - {namespace: '*', subjects: [user_id], retain: 7d}\n", []string{"namespaces[0]", "retain without retain_by"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte(tc.src))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestWhere_NamesTheFileAndLineOfARule(t *testing.T) {
	cfg, err := Parse("lethe.yaml", []byte("postgres: {upstream: \"db:5432\"}\ncapture:\n  wal: off\n  database: app\n  tables:\n    - {table: public.a, id: id, subjects: [user_id]}\n    - {table: public.b, id: id, subjects: [user_id]}\n"))
	require.NoError(t, err)
	assert.Equal(t, "lethe.yaml:7", cfg.Where("capture.tables[1]"))
	assert.Equal(t, "lethe.yaml", cfg.Where("coverage.ignore[0]"))
}
