//go:build integration

package integration

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"
)

// Write shapes: the ways real vector-store clients write rows into a vector
// table, each writing rows for two data subjects (shapeSubjects). A capture
// test runs them through lethe-proxy with a rule per table (table, idColumn,
// subject) and checks what was recorded; TestShapes runs each directly and
// through a plain relay and checks the tables.
//
// Every shape writes shapePerSubject rows per subject (interleaved alice,
// bob, alice, ...) and returns a JSON summary that depends only on what was
// written: {"shape", "table", "rows", "counts": {subject: n}, "ids": {subject:
// [ids the client chose]}, "wire": {what went on the wire}}. The script
// shapes live in shapes/ (their header comments cite the library code whose
// SQL they follow).
//
// The write each shape puts on the wire (observed with a message tap):
//
//	langchainjs(-ids)   extended, unnamed statement, Parse without parameter
//	                    types, all parameters text: one multi-row INSERT of
//	                    ("text","embedding","metadata"[,"id"]) = ($1,$2,$3[,$4]),…;
//	                    no transaction; DDL as simple Query.
//	langchain_postgres  extended, unnamed: multi-row INSERT … ON CONFLICT (id) DO
//	                    UPDATE with $n::VARCHAR/$n::UUID/$n::JSONB casts; id,
//	                    embedding, document text with OID 0, collection_id binary
//	                    uuid, cmetadata text jsonb (OID 3802); inside BEGIN/COMMIT
//	                    (psycopg sends those as extended statements too).
//	mem0                simple Query SET search_path, then a pipeline: Parse
//	                    "_pg3_0" (VALUES ($1,$2,$3)), one Bind/Describe/Execute per
//	                    row, one Sync; id and payload text OID 0, vector as text
//	                    float8[] (OID 1022); inside BEGIN/COMMIT.
//	vecs                simple Query "BEGIN", one simple Query INSERT … VALUES with
//	                    inline literals … ON CONFLICT (id) DO UPDATE, simple
//	                    "COMMIT".
//	llamaindex          extended, unnamed: multi-row INSERT without id … RETURNING
//	                    id, all text (metadata_ as json OID 114); BEGIN/COMMIT.
//	copy_binary         simple Query COPY … FROM STDIN WITH (FORMAT BINARY), binary
//	                    rows (text, pgvector binary vector, jsonb) in CopyData;
//	                    BEGIN/COMMIT.
//	pgx_params          extended, unnamed: multi-row INSERT, every parameter binary
//	                    with explicit OIDs (text, vector, jsonb); no transaction.
//	pgx_copyfrom        Parse/Describe of a cached "stmtcache_…" select of the
//	                    columns, then simple Query copy … from stdin binary; with
//	                    binary rows; no transaction.

// shapePrefix names the tables the shapes create.
const shapePrefix = "lethe_shape"

// shapePerSubject is how many rows each shape writes for each subject.
const shapePerSubject = 3

var shapeSubjects = []string{"alice@example.com", "bob@example.com"}

// writeShape is one client's way of writing into a vector table.
type writeShape struct {
	name     string
	table    string   // schema-qualified table the rows go to
	idColumn string   // the row identity
	subject  string   // rule expression over the table's columns that yields the data subject
	drop     []string // every table the shape creates (schema-qualified), dropped before and after
	// clientIDs: the client chooses the ids (the summary's "ids" must match
	// the table); otherwise the database generates them.
	clientIDs bool
	// run performs the writes against addr (the server or a proxy) and
	// returns the JSON summary. The tables must not exist or be empty.
	run func(t *testing.T, db testDB, addr string) string
}

// writeShapes lists every shape with the rule its table needs.
var writeShapes = []writeShape{
	{
		name: "langchainjs", table: "public." + shapePrefix + "_lcjs", idColumn: "id",
		subject: "metadata->>'user_id'", drop: []string{"public." + shapePrefix + "_lcjs"},
		run: shapeNode("auto"),
	},
	{
		name: "langchainjs-ids", table: "public." + shapePrefix + "_lcjs_ids", idColumn: "id",
		subject: "metadata->>'user_id'", drop: []string{"public." + shapePrefix + "_lcjs_ids"},
		clientIDs: true, run: shapeNode("ids"),
	},
	{
		name: "langchain_postgres", table: "public." + shapePrefix + "_langchain_pg_embedding", idColumn: "id",
		subject: "cmetadata->>'user_id'",
		drop: []string{
			"public." + shapePrefix + "_langchain_pg_embedding",
			"public." + shapePrefix + "_langchain_pg_collection",
		},
		clientIDs: true, run: shapePython("langchain_postgres"),
	},
	{
		name: "mem0", table: "public." + shapePrefix + "_mem0", idColumn: "id",
		subject: "payload->>'user_id'", drop: []string{"public." + shapePrefix + "_mem0"},
		clientIDs: true, run: shapePython("mem0"),
	},
	{
		name: "vecs", table: "vecs." + shapePrefix + "_docs", idColumn: "id",
		subject: "metadata->>'user_id'", drop: []string{"vecs." + shapePrefix + "_docs"},
		clientIDs: true, run: shapePython("vecs"),
	},
	{
		name: "llamaindex", table: "public.data_" + shapePrefix, idColumn: "id",
		subject: "metadata_->>'user_id'", drop: []string{"public.data_" + shapePrefix},
		run: shapePython("llamaindex"),
	},
	{
		name: "copy_binary", table: "public." + shapePrefix + "_copy", idColumn: "id",
		subject: "metadata->>'user_id'", drop: []string{"public." + shapePrefix + "_copy"},
		clientIDs: true, run: shapePython("copy_binary"),
	},
	{
		name: "pgx_params", table: "public." + shapePrefix + "_pgx", idColumn: "id",
		subject: "metadata->>'user_id'", drop: []string{"public." + shapePrefix + "_pgx"},
		clientIDs: true, run: shapePgxParams,
	},
	{
		name: "pgx_copyfrom", table: "public." + shapePrefix + "_pgxcopy", idColumn: "id",
		subject: "metadata->>'user_id'", drop: []string{"public." + shapePrefix + "_pgxcopy"},
		clientIDs: true, run: shapePgxCopyFrom,
	},
}

// TestShapes runs every write shape directly against the server and through
// an in-process relay; both runs must print the same summary and leave the
// same rows (per subject: count, and ids where the client chose them).
func TestShapes(t *testing.T) {
	db := loadTestDB(t)
	shapeCheckTools(t)
	p := startProxy(t, db, nil)
	extExec(t, db, "CREATE EXTENSION IF NOT EXISTS vector")
	t.Cleanup(func() { shapeDropVecsSchema(t, db) })
	for _, sh := range writeShapes {
		t.Run(sh.name, func(t *testing.T) {
			shapeDropTables(t, db, sh)
			var summaries []string
			var states []map[string][]string
			for _, target := range []struct{ name, addr string }{{"direct", db.Addr()}, {"proxy", p.Addr}} {
				shapeDrop(t, db, sh)
				summary := sh.run(t, db, target.addr)
				t.Logf("%s %s summary:\n%s", sh.name, target.name, summary)
				state := shapeCheck(t, db, sh, summary)
				summaries = append(summaries, summary)
				states = append(states, state)
			}
			extEqual(t, summaries[0], summaries[1], sh.name+" summary through the proxy vs direct")
			require.Equal(t, states[0], states[1], "%s: table contents through the proxy vs direct", sh.name)
		})
	}
}

// shapeCheckTools fails the test when a client the shapes need is missing.
func shapeCheckTools(t testing.TB) {
	t.Helper()
	if err := exec.Command(systemPython, "-c", "import psycopg").Run(); err != nil {
		t.Fatalf("%s cannot import psycopg (%v): run scripts/setup.sh", systemPython, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed: run scripts/setup.sh")
	}
	for _, m := range []string{"pg", "@langchain/community", "@langchain/core"} {
		if _, err := os.Stat(filepath.Join("node", "node_modules", m, "package.json")); err != nil {
			t.Fatalf("test/integration/node/node_modules has no %s (%v): run npm ci in test/integration/node", m, err)
		}
	}
}

// shapeDropTables drops the shape's tables now and when the test ends.
func shapeDropTables(t testing.TB, db testDB, sh writeShape) {
	t.Helper()
	extDropTables(t, db, sh.drop...)
}

// shapeDropVecsSchema drops the schema the vecs shape creates, if nothing
// else is left in it (registered as a cleanup after the tables' cleanups).
func shapeDropVecsSchema(t testing.TB, db testDB) {
	conn, err := pgx.Connect(context.Background(), db.DSN(db.Addr(), "connect_timeout=10"))
	if err != nil {
		t.Errorf("cleanup: %v", err)
		return
	}
	defer conn.Close(context.Background())
	// Without CASCADE this fails, harmlessly, when the schema is not empty.
	_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS vecs")
}

// shapeDrop drops the shape's tables now (between runs).
func shapeDrop(t testing.TB, db testDB, sh writeShape) {
	t.Helper()
	extExec(t, db, "DROP TABLE IF EXISTS "+strings.Join(sh.drop, ", "))
}

// shapeSummary is the common part of every shape's JSON summary.
type shapeSummary struct {
	Shape  string              `json:"shape"`
	Table  string              `json:"table"`
	Rows   int                 `json:"rows"`
	Counts map[string]int      `json:"counts"`
	IDs    map[string][]string `json:"ids"`
}

// shapeCheck asserts, by querying the server directly, that the shape's
// table holds shapePerSubject rows for each subject and nothing else, and
// that the ids the client chose are the ones stored. It returns the table's
// state per subject: the sorted ids when the client chose them, else the
// count.
func shapeCheck(t testing.TB, db testDB, sh writeShape, summary string) map[string][]string {
	t.Helper()
	var s shapeSummary
	require.NoError(t, json.Unmarshal([]byte(summary), &s), "summary: %s", summary)
	require.Equal(t, len(shapeSubjects)*shapePerSubject, s.Rows, "%s: rows in summary", sh.name)
	got := shapeState(t, db, sh)
	state := map[string][]string{}
	var subjects []string
	for subject := range got {
		subjects = append(subjects, subject)
	}
	sort.Strings(subjects)
	require.Equal(t, shapeSubjects, subjects, "%s: subjects in %s", sh.name, sh.table)
	for _, subject := range shapeSubjects {
		ids := got[subject]
		require.Len(t, ids, shapePerSubject, "%s: rows for %s", sh.name, subject)
		require.Equal(t, shapePerSubject, s.Counts[subject], "%s: summary count for %s", sh.name, subject)
		if sh.clientIDs {
			want := append([]string(nil), s.IDs[subject]...)
			sort.Strings(want)
			require.Equal(t, want, ids, "%s: ids for %s", sh.name, subject)
			state[subject] = ids
		} else {
			require.Empty(t, s.IDs[subject], "%s: database-generated ids", sh.name)
			state[subject] = []string{fmt.Sprint(len(ids))}
		}
	}
	return state
}

// shapeState reads the table's ids per subject (sorted), using the shape's
// rule expressions.
func shapeState(t testing.TB, db testDB, sh writeShape) map[string][]string {
	t.Helper()
	conn := connect(t, db.DSN(db.Addr(), "connect_timeout=10"))
	defer conn.Close(ctxT(t))
	q := fmt.Sprintf("SELECT (%s)::text, array_agg((%s)::text ORDER BY (%s)::text) FROM %s GROUP BY 1",
		sh.subject, sh.idColumn, sh.idColumn, sh.table)
	rows, err := conn.Query(ctxT(t), q)
	require.NoError(t, err, q)
	out := map[string][]string{}
	for rows.Next() {
		var subject *string
		var ids []string
		require.NoError(t, rows.Scan(&subject, &ids))
		require.NotNil(t, subject, "%s: rows without a subject in %s", sh.name, sh.table)
		out[*subject] = ids
	}
	require.NoError(t, rows.Err())
	return out
}

// shapeNode runs shapes/langchainjs.js (LangChain.js PGVectorStore) in mode
// "auto" (database-generated ids) or "ids" (caller ids).
func shapeNode(mode string) func(t *testing.T, db testDB, addr string) string {
	return func(t *testing.T, db testDB, addr string) string {
		t.Helper()
		script, err := filepath.Abs(filepath.Join("shapes", "langchainjs.js"))
		require.NoError(t, err)
		res := extRun(t, "", extEnv(db, addr, db.User, db.Password), "node", script,
			db.URL(addr, "application_name=lethe-shapes"), shapePrefix, mode)
		require.Equal(t, 0, res.Exit, "%s", res)
		return res.Stdout
	}
}

// shapePython runs one shape of shapes/psycopg_shapes.py (psycopg 3).
func shapePython(shape string) func(t *testing.T, db testDB, addr string) string {
	return func(t *testing.T, db testDB, addr string) string {
		t.Helper()
		script, err := filepath.Abs(filepath.Join("shapes", "psycopg_shapes.py"))
		require.NoError(t, err)
		res := extRun(t, "", extEnv(db, addr, db.User, db.Password), systemPython, script,
			db.DSN(addr, "connect_timeout=10 application_name=lethe-shapes"), shapePrefix, shape)
		require.Equal(t, 0, res.Exit, "%s", res)
		return res.Stdout
	}
}

// shapeVector is an embedding; its binary form is pgvector's: uint16 dim,
// uint16 0 (unused), then dim big-endian float4s.
type shapeVector []float32

func shapeAppendVector(buf []byte, v shapeVector) []byte {
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(v)))
	buf = binary.BigEndian.AppendUint16(buf, 0)
	for _, f := range v {
		buf = binary.BigEndian.AppendUint32(buf, math.Float32bits(f))
	}
	return buf
}

// shapeEmbedding is a deterministic 8-dimensional embedding.
func shapeEmbedding(s, i int) shapeVector { return shapeEmbeddingOf(s, i, 8) }

// shapeEmbeddingOf is a deterministic embedding of dim dimensions.
func shapeEmbeddingOf(s, i, dim int) shapeVector {
	v := make(shapeVector, dim)
	for k := range v {
		v[k] = 0.125*float32(k+1) + 0.5*float32(s) + 0.01*float32(i)
	}
	return v
}

// shapeRow is one row a Go shape writes.
type shapeRow struct {
	subject, id string
	vec         shapeVector
	metadata    map[string]any
}

func shapeRows(kind string) []shapeRow {
	var rows []shapeRow
	for i := 0; i < shapePerSubject; i++ {
		for s, subject := range shapeSubjects {
			rows = append(rows, shapeRow{
				subject:  subject,
				id:       fmt.Sprintf("%s-%s-%d", kind, strings.Split(subject, "@")[0], i),
				vec:      shapeEmbedding(s, i),
				metadata: map[string]any{"user_id": subject, "source": kind, "seq": i},
			})
		}
	}
	return rows
}

// shapeSummaryJSON renders a Go shape's summary like the scripts do.
func shapeSummaryJSON(t testing.TB, shape, table string, rows []shapeRow, wire map[string]any) string {
	t.Helper()
	counts, ids := map[string]int{}, map[string][]string{}
	for _, r := range rows {
		counts[r.subject]++
		ids[r.subject] = append(ids[r.subject], r.id)
	}
	b, err := json.MarshalIndent(map[string]any{
		"shape": shape, "table": table, "rows": len(rows), "counts": counts, "ids": ids, "wire": wire,
	}, "", " ")
	require.NoError(t, err)
	return string(b) + "\n"
}

// shapePgxTable connects pgx to addr, creates the pgx shapes' table and
// returns the connection with vector's type OID.
func shapePgxTable(t *testing.T, db testDB, addr, table string, dim int) (*pgx.Conn, uint32) {
	t.Helper()
	ctx := ctxT(t)
	conn := connect(t, db.DSN(addr, "connect_timeout=10 application_name=lethe-shapes"))
	_, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (id text PRIMARY KEY, embedding vector(%d), metadata jsonb)", table, dim))
	require.NoError(t, err)
	var vectorOID uint32
	require.NoError(t, conn.QueryRow(ctx, "SELECT 'vector'::regtype::oid").Scan(&vectorOID))
	return conn, vectorOID
}

// shapePgxParams (pgx / pgvector-go style): one multi-row INSERT sent with
// pgconn.ExecParams over the extended protocol (unnamed statement), every
// parameter in binary with explicit type OIDs: id text (25), embedding
// vector (pgvector's binary format, OID looked up), metadata jsonb (3802,
// version byte 1 + JSON). No extra types are registered. The embeddings
// have 1536 dimensions, as OpenAI's do: the Bind (~37 KB) is bigger than
// the relay's buffer, so capture reads it while it streams to the server.
func shapePgxParams(t *testing.T, db testDB, addr string) string {
	t.Helper()
	ctx := ctxT(t)
	table := shapePrefix + "_pgx"
	const dim = 1536
	conn, vectorOID := shapePgxTable(t, db, addr, table, dim)
	defer conn.Close(ctx)

	rows := shapeRows("pgx")
	var values []string
	var params [][]byte
	var oids []uint32
	var formats []int16
	for i, r := range rows {
		values = append(values, fmt.Sprintf("($%d, $%d, $%d)", 3*i+1, 3*i+2, 3*i+3))
		meta, err := json.Marshal(r.metadata)
		require.NoError(t, err)
		vec := shapeEmbeddingOf(len(params), i, dim)
		params = append(params, []byte(r.id), shapeAppendVector(nil, vec), append([]byte{1}, meta...))
		oids = append(oids, pgtype.TextOID, vectorOID, pgtype.JSONBOID)
		formats = append(formats, pgtype.BinaryFormatCode, pgtype.BinaryFormatCode, pgtype.BinaryFormatCode)
	}
	stmt := "INSERT INTO " + table + " (id, embedding, metadata) VALUES " + strings.Join(values, ", ")
	res := conn.PgConn().ExecParams(ctx, stmt, params, oids, formats, nil).Read()
	require.NoError(t, res.Err)
	require.Equal(t, int64(len(rows)), res.CommandTag.RowsAffected())
	return shapeSummaryJSON(t, "pgx_params", table, rows, map[string]any{
		"protocol": "extended", "statement": stmt, "param_count": len(params),
		"param_types": []string{"text", "vector", "jsonb"}, "param_formats": []string{"binary"},
		"transaction": false,
	})
}

// shapePgxCopyFrom (pgx CopyFrom, what pgvector-go's bulk load does): pgx
// first describes "select "id", "embedding", "metadata" from "<table>"" (a
// cached prepared statement) for the column OIDs, then sends
// copy "<table>" ( "id", "embedding", "metadata" ) from stdin binary; with
// every value in binary. The vector goes through a codec registered on the
// connection for vector's OID, the way pgvector-go's pgxvec.RegisterTypes does.
func shapePgxCopyFrom(t *testing.T, db testDB, addr string) string {
	t.Helper()
	ctx := ctxT(t)
	table := shapePrefix + "_pgxcopy"
	conn, vectorOID := shapePgxTable(t, db, addr, table, 8)
	defer conn.Close(ctx)
	conn.TypeMap().RegisterType(&pgtype.Type{Name: "vector", OID: vectorOID, Codec: shapeVectorCodec{}})

	rows := shapeRows("pgxcopy")
	src := make([][]any, len(rows))
	for i, r := range rows {
		src[i] = []any{r.id, r.vec, r.metadata}
	}
	n, err := conn.CopyFrom(ctx, pgx.Identifier{table}, []string{"id", "embedding", "metadata"}, pgx.CopyFromRows(src))
	require.NoError(t, err)
	require.Equal(t, int64(len(rows)), n)
	return shapeSummaryJSON(t, "pgx_copyfrom", table, rows, map[string]any{
		"protocol":    "copy",
		"describe":    fmt.Sprintf(`select "id", "embedding", "metadata" from "%s"`, table),
		"statement":   fmt.Sprintf(`copy "%s" ( "id", "embedding", "metadata" ) from stdin binary;`, table),
		"copy_format": "binary", "column_types": []string{"text", "vector", "jsonb"},
		"transaction": false,
	})
}

// shapeVectorCodec encodes shapeVector in pgvector's binary format (encode
// only: the shapes never read vectors back through pgx).
type shapeVectorCodec struct{}

func (shapeVectorCodec) FormatSupported(format int16) bool {
	return format == pgtype.BinaryFormatCode
}

func (shapeVectorCodec) PreferredFormat() int16 { return pgtype.BinaryFormatCode }

func (shapeVectorCodec) PlanEncode(_ *pgtype.Map, _ uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(shapeVector); ok && format == pgtype.BinaryFormatCode {
		return shapeVectorEncodePlan{}
	}
	return nil
}

func (shapeVectorCodec) PlanScan(*pgtype.Map, uint32, int16, any) pgtype.ScanPlan { return nil }

func (shapeVectorCodec) DecodeDatabaseSQLValue(*pgtype.Map, uint32, int16, []byte) (driver.Value, error) {
	return nil, errors.New("shapeVectorCodec: decoding is not supported")
}

func (shapeVectorCodec) DecodeValue(*pgtype.Map, uint32, int16, []byte) (any, error) {
	return nil, errors.New("shapeVectorCodec: decoding is not supported")
}

type shapeVectorEncodePlan struct{}

func (shapeVectorEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	return shapeAppendVector(buf, value.(shapeVector)), nil
}
