//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// systemPython is Debian's interpreter, the one python3-psycopg is installed
// for (another python3 may come first on PATH).
const systemPython = "/usr/bin/python3"

// TestPsycopg runs clients/psycopg_client.py (psycopg 3 over libpq: server-side
// binding, pipelines, COPY in every direction, pgvector, prepared statements,
// binary results, LISTEN/NOTIFY) directly and through the proxy. The two JSON
// reports must be identical and hold the expected values.
func TestPsycopg(t *testing.T) {
	db := loadTestDB(t)
	if err := exec.Command(systemPython, "-c", "import psycopg").Run(); err != nil {
		t.Fatalf("%s cannot import psycopg (%v): run scripts/setup.sh", systemPython, err)
	}
	p := startProxy(t, db, nil)
	const prefix = "lethe_psycopg"
	extDropTables(t, db, prefix+"_items", prefix+"_copy", prefix+"_copyb", prefix+"_vec")

	script, err := filepath.Abs(filepath.Join("clients", "psycopg_client.py"))
	require.NoError(t, err)
	var outs []string
	for _, addr := range []string{db.Addr(), p.Addr} {
		host, port, _ := strings.Cut(addr, ":")
		conninfo := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s connect_timeout=10 application_name=lethe-psycopg",
			host, port, db.User, db.Password, db.DB)
		res := extRun(t, "", extEnv(db, addr, db.User, db.Password), systemPython, script, conninfo, prefix)
		require.Equal(t, 0, res.Exit, "%s", res)
		outs = append(outs, res.Stdout)
	}
	extEqual(t, outs[0], outs[1], "psycopg report through the proxy vs direct")

	var doc any
	require.NoError(t, json.Unmarshal([]byte(outs[1]), &doc))
	for path, want := range map[string]string{
		"psycopg":                         `"3"`,
		"params":                          `[42, "héllo 'quoted' \"double\"", {"decimal": "2.50"}, true, true, {"bytes": "0001feff"}, 1200000, "0f7f7962909f7007344dcfe1975e0126"]`,
		"pipeline":                        `{"rowcount": 200, "select": [200, 40200, "item-99"]}`,
		"pipeline_error.error.sqlstate":   `"23505"`,
		"pipeline_error.error.constraint": `"lethe_psycopg_items_pkey"`,
		"pipeline_error.rows_201_202":     `[]`,
		"pipeline_error.status_after":     `"IDLE"`,
		"pipeline_error.usable_after":     `[42, "still here"]`,
		"pipeline_after_error":            `[[1], [200]]`,
		"transactions.error.sqlstate":     `"22012"`,
		"transactions.rows":               `[[302, "committed"]]`,
		"copy_in_text.rowcounts":          `[5000, 5000]`,
		"copy_in_text.check.0":            `10000`,
		"copy_in_text.check.1":            `9500`,
		"copy_in_text.check.2":            `50005000`,
		"copy_in_binary.rowcount":         `3000`,
		"copy_in_binary.check.0":          `3000`,
		"copy_in_binary.check.1":          `2572`,
		"copy_in_binary.check.2":          `{"decimal": "562687.500"}`,
		"copy_in_binary.check.5":          `4501500`,
		"copy_out.text.rowcount":          `10000`,
		"copy_out.text_rows.5":            `["6000", "raw 6000", "6000"]`,
		"copy_out.text_rows.0":            `["1000", "row 1000\twith tab, \\ and ✓", null]`,
		"copy_out.binary_rows.0":          `[499, "bin ✓ 499", {"decimal": "62.375"}, {"datetime": "2024-01-02T03:12:24.678000+00:00"}, {"bytes": "` + strings.Repeat("f3", 49) + `"}, {"dict": {"even": false, "i": 499}}, ["t499", "x"]]`,
		"vector.text":                     `[[1, "[1,2,3]", "[1,2,3]", {"float": "1.0"}], [2, "[0.5,-1,2.25]", "[0.5,-1,2.25]", {"float": "3.5089172119045497"}], [3, "[10,0,0]", "[10,0,0]", {"float": "10.04987562112089"}]]`,
		"vector.binary.0.1":               `{"bytes": "000300003f8000004000000040400000"}`,
		"vector.dimension_error.message":  `"expected 3 dimensions, not 2"`,
		"prepared.results":                `[[0, "p0"], [3, "p1"], [6, "p2"], [9, "p3"]]`,
		"prepared.server_statements.0.1":  `"SELECT $1::int * 3, $2::text"`,
		"binary_results.same_values":      `true`,
		"binary_results.formats":          `[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]]`,
		"binary_results.binary.8":         `{"datetime": "2024-01-02T03:04:05.678000+00:00"}`,
		"named_cursor":                    `[10000, 50005000]`,
		"notify.self":                     `[["lethe_psycopg_ch", "to myself", true]]`,
		"notify.other":                    `[["lethe_psycopg_ch", "from another session ✓", true]]`,
		"errors.0.sqlstate":               `"42601"`,
		"errors.1.sqlstate":               `"42P01"`,
		"errors.2.sqlstate":               `"22P02"`,
		"errors.3":                        `["ok"]`,
	} {
		require.JSONEq(t, want, extJSONAt(t, doc, path), path)
	}
}

// extJSONAt returns the JSON of the value at a dotted path (object keys and
// array indexes) in a decoded JSON document.
func extJSONAt(t testing.TB, doc any, path string) string {
	t.Helper()
	v := doc
	for _, key := range strings.Split(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			child, ok := node[key]
			require.True(t, ok, "%s: no key %q", path, key)
			v = child
		case []any:
			i, err := strconv.Atoi(key)
			require.NoError(t, err, "%s: %q is not an index", path, key)
			require.Less(t, i, len(node), "%s: index %d out of range", path, i)
			v = node[i]
		default:
			t.Fatalf("%s: cannot descend into %T at %q", path, v, key)
		}
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
