package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse_RulesCarryADescriptionForTheDataMap(t *testing.T) {
	src := "postgres:\n  upstream: db:5432\ncapture:\n  wal: off\n  database: app\n  tables:\n" +
		"    - {table: public.docs, id: id, subjects: [user_id], description: chat memory embeddings}\n" +
		"pinecone:\n  indexes:\n    - name: docs\n      host: http://127.0.0.1:5080\n" +
		"      namespaces: [{namespace: \"*\", subjects: [user_id], description: support answers}]\n"
	cfg, err := Parse("cfg.yaml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "chat memory embeddings", cfg.Capture.Tables[0].Description)
	assert.Equal(t, "support answers", cfg.Pinecone.Indexes[0].Namespaces[0].Description)
}
