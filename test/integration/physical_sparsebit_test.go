//go:build integration

package integration

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// TestPhysical_SparsevecBitAndQuantizedCopies: a table with a vector, a
// sparsevec and a bit(256) column, an HNSW index on the sparsevec and one
// on the vector's binary quantization (binary_quantize(embedding)::bit(256),
// as pgvector suggests for large vectors): after a forget the layer's
// counts, relation by relation, equal the test's own reading of every page
// for the person's stored sparsevec, bits and quantized bits (read from
// the server with its send functions), and the pages the person's
// sparsevec and quantized bits are in are among them.
func TestPhysical_SparsevecBitAndQuantizedCopies(t *testing.T) {
	db, direct := toasttDB(t, "sparset_db")
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `CREATE TABLE sparset_docs (id bigint PRIMARY KEY, owner text, embedding vector(256), sparse sparsevec(1000), flags bit(256));
		CREATE INDEX sparset_sparse ON sparset_docs USING hnsw (sparse sparsevec_l2_ops);
		CREATE INDEX sparset_quantized ON sparset_docs USING hnsw ((binary_quantize(embedding)::bit(256)) bit_hamming_ops)`)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(27, 9))
	const gone, kept = "sparset-gone-3f1e", "sparset-kept-b07a"
	var goneVectors [][]float32
	for id := 1; id <= 120; id++ {
		owner := kept
		if id%6 == 0 {
			owner = gone
		}
		v := make([]float32, 256)
		for j := range v {
			v[j] = rng.Float32()*2 - 1
		}
		var sparse []string
		for j := 0; j < 8; j++ {
			sparse = append(sparse, fmt.Sprintf("%d:%g", 1+rng.IntN(1000), rng.Float32()+0.5))
		}
		var flags strings.Builder
		for range 256 {
			flags.WriteByte(byte('0' + rng.IntN(2)))
		}
		_, err := direct.Exec(ctx, `INSERT INTO sparset_docs VALUES ($1, $2, $3::text::vector, $4::text::sparsevec, $5::text::bit(256))`,
			id, owner, pagesVectorText(v), "{"+strings.Join(sparse, ",")+"}/1000", flags.String())
		// Two random indices may repeat: such a row is left out.
		if err != nil && strings.Contains(err.Error(), "duplicate") {
			continue
		}
		require.NoError(t, err)
		if owner == gone {
			goneVectors = append(goneVectors, v)
		}
	}
	runs := diskRuns(goneVectors)
	var sparseRuns, bitRuns int
	rows, err := direct.Query(ctx, `SELECT sparsevec_send(sparse), sparsevec_send(l2_normalize(sparse)), bit_send(flags), bit_send(binary_quantize(embedding))
		FROM sparset_docs WHERE owner = $1`, gone)
	require.NoError(t, err)
	var sparse, unit, flags, quantized []byte
	_, err = pgx.ForEachRow(rows, []any{&sparse, &unit, &flags, &quantized}, func() error {
		for _, sent := range [][]byte{sparse, unit} {
			stored := make([]byte, len(sent))
			for i := 0; i+4 <= len(sent); i += 4 {
				binary.LittleEndian.PutUint32(stored[i:], binary.BigEndian.Uint32(sent[i:]))
			}
			for i := 12; i+16 <= len(stored); i += 4 {
				runs[string(stored[i:i+16])] = true
				sparseRuns++
			}
		}
		for _, sent := range [][]byte{flags, quantized} {
			for i := 4; i+16 <= len(sent); i++ {
				runs[string(sent[i:i+16])] = true
				bitRuns++
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, sparseRuns)
	require.Positive(t, bitRuns)
	awaitNoOlderSnapshot(t, direct)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	deleted, got := forgetWithPhysicalScan(t, store, pagesRule("sparset_docs"), pgstore.DefaultPhysicalScan, gone)
	require.Equal(t, len(goneVectors), deleted)
	want := scanEveryPage(t, direct, "sparset_docs", runs, gone)
	requireSameCounts(t, got, want)
	require.Positive(t, want["sparset_sparse"].vector, "the sparsevec index holds her sparse vectors")
	require.Positive(t, want["sparset_quantized"].vector, "the quantized index holds her bits")
}
