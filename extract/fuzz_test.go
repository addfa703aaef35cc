package extract

import (
	"bytes"
	"testing"
)

// FuzzAnalyzeTags feeds arbitrary statement text and parameters through
// Analyze and Tags: malformed input must come back as an error, never a
// panic, and anything Analyze attributes to a configured table must have
// passed the Mentions prefilter.
func FuzzAnalyzeTags(f *testing.F) {
	f.Add(`INSERT INTO docs (id, user_id, cmetadata) VALUES ($1, $2, $3)`, []byte("a"), []byte("u"), []byte(`{"user_id":"x"}`), false)
	f.Add(`DELETE FROM docs WHERE id = ANY($1)`, []byte(`{a,"b"}`), []byte(nil), []byte(nil), false)
	f.Add(`UPDATE docs SET cmetadata = $1 WHERE id IN ($2, $3)`, []byte{1, '{', '}'}, uuidBytes, be64(3), true)
	// INSERT without a column list, with the catalog's column orders.
	f.Add(`INSERT INTO docs VALUES ($1, 'x', $2, $3)`, []byte("a"), []byte("u"), []byte(`{"user_id":"x"}`), false)
	f.Add(`INSERT INTO docs VALUES ('a', DEFAULT, $1), ($2, 'y', 'v', NULL, NULL)`, []byte("u"), []byte("b"), []byte(nil), false)
	f.Add(`INSERT INTO docs SELECT $1, 'x', $2::text`, uuidBytes, []byte("u"), []byte(nil), true)
	f.Add(`INSERT INTO items_2025 VALUES ('t', $1, $2) ON CONFLICT DO NOTHING`, []byte("u"), be64(3), []byte(nil), true)
	f.Add(`INSERT INTO items_vv VALUES ($1, $2), ($3)`, []byte("a"), []byte("u"), []byte("b"), false)
	rules := []*Rules{testRules(f), orderRules(f)}
	f.Fuzz(func(t *testing.T, sql string, p1, p2, p3 []byte, bin bool) {
		for _, r := range rules {
			analyzeTagsOnce(t, r, sql, p1, p2, p3, bin)
		}
	})
}

func analyzeTagsOnce(t *testing.T, r *Rules, sql string, p1, p2, p3 []byte, bin bool) {
	as, err := r.Analyze(sql, []string{"vecs", "public"})
	if err != nil {
		return
	}
	if len(as) > 0 && !r.Mentions(sql) {
		t.Fatalf("Analyze found %s in %q but Mentions said no", as[0].Table, sql)
	}
	p := Params{Values: [][]byte{p1, p2, p3}}
	if bin {
		p.Formats = []int16{1}
	}
	for _, a := range as {
		tags, err := a.Tags(p)
		if err != nil {
			continue
		}
		for _, tg := range tags {
			if tg.Table != a.Table || tg.Op == 0 {
				t.Fatalf("bad tag %+v from %s analysis", tg, a.Kind)
			}
		}
	}
}

// fuzzCopyStatements are the COPY shapes FuzzCopyDecoder picks from.
var fuzzCopyStatements = []string{
	`COPY docs (id, user_id, cmetadata) FROM STDIN`,
	`COPY docs (id, user_id, cmetadata) FROM STDIN WITH (FORMAT csv, HEADER)`,
	`COPY docs (id, user_id, cmetadata) FROM STDIN WITH (FORMAT csv, QUOTE '''', ESCAPE '\', DELIMITER ';')`,
	`COPY docs (id, user_id, cmetadata) FROM STDIN BINARY`,
}

// FuzzCopyDecoder feeds arbitrary COPY data in arbitrary chunks: no panics,
// and the tags must not depend on how the stream was cut.
func FuzzCopyDecoder(f *testing.F) {
	f.Add(uint8(0), []byte("a\tu\t{\"user_id\":\"v\"}\nb\t\\N\t\\N\n"), uint8(3))
	f.Add(uint8(1), []byte("id,u,m\n\"a\"\"b\",\"x\ny\",\n"), uint8(2))
	f.Add(uint8(2), []byte("a;'it\\'s';''\n"), uint8(1))
	f.Add(uint8(3), binaryCopy([][]byte{uuidBytes, []byte("u"), append([]byte{1}, `{"user_id":[1,"x"]}`...)}), uint8(5))
	r := testRules(f)
	analyses := make([]*Analysis, len(fuzzCopyStatements))
	for i, sql := range fuzzCopyStatements {
		analyses[i] = copyAnalysis(f, r, sql)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte, chunk uint8) {
		a := analyses[int(which)%len(analyses)]
		whole, errWhole := decodeChunks(t, a, data, 0)
		cut, errCut := decodeChunks(t, a, data, int(chunk)+1)
		if (errWhole == nil) != (errCut == nil) {
			t.Fatalf("whole: %v, in chunks of %d: %v", errWhole, int(chunk)+1, errCut)
		}
		if errWhole == nil && !equalTags(whole, cut) {
			t.Fatalf("tags differ: whole %v, chunks of %d %v", whole, int(chunk)+1, cut)
		}
	})
}

func equalTags(a, b []Tag) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Table != y.Table || x.Op != y.Op || x.ID != y.ID || x.Reason != y.Reason || len(x.Subjects) != len(y.Subjects) {
			return false
		}
		for j := range x.Subjects {
			if !bytes.Equal([]byte(x.Subjects[j]), []byte(y.Subjects[j])) {
				return false
			}
		}
	}
	return true
}

// FuzzServerSideWrites is FuzzAnalyzeTags' prefilter check for rules with
// server-side writers: calls, fired relations and DO blocks are only found
// in text Mentions lets through, and every analysis names a configured
// table.
func FuzzServerSideWrites(f *testing.F) {
	f.Add(`SELECT add_doc($1, $2)`)
	f.Add(`CALL app.store_memory('m')`)
	f.Add(`INSERT INTO messages (id) VALUES (1)`)
	f.Add(`DO $$ BEGIN PERFORM add_doc('a', 'u'); DELETE FROM docs; END $$`)
	f.Add(`EXPLAIN (ANALYZE) WITH w AS (UPDATE staging SET x = 1 RETURNING 1) SELECT "Odd_Name"(1)`)
	r := writerRules(f)
	f.Fuzz(func(t *testing.T, sql string) {
		as, err := r.Analyze(sql, nil)
		if err != nil {
			return
		}
		if len(as) > 0 && !r.Mentions(sql) {
			t.Fatalf("Analyze found %s in %q but Mentions said no", as[0].Table, sql)
		}
		for _, a := range as {
			if a.rule == nil || r.tables[a.Table] != a.rule {
				t.Fatalf("analysis of an unconfigured table %q", a.Table)
			}
			if a.Kind == KindUnattributed && a.Reason == "" {
				t.Fatalf("unattributed %s without a reason", a.Table)
			}
		}
	})
}

// FuzzFindWriters feeds arbitrary function bodies and rule definitions to
// the catalog reader: no panics, and only configured tables come out.
func FuzzFindWriters(f *testing.F) {
	f.Add("sql", `INSERT INTO docs (id, user_id) VALUES ($1, $2)`, "", `CREATE RULE r AS ON INSERT TO x DO ALSO DELETE FROM mem0`)
	f.Add("plpgsql", "BEGIN EXECUTE 'delete from docs'; END", "CREATE FUNCTION public.f() RETURNS void LANGUAGE plpgsql AS $$BEGIN EXECUTE 'delete from docs'; PERFORM g(); END$$", "")
	f.Add("sql", "", "CREATE FUNCTION f() RETURNS void LANGUAGE sql BEGIN ATOMIC INSERT INTO items VALUES (1); END", "not a rule")
	f.Add("plpython3u", `plpy.execute("update docs set x = 1")`, "", "")
	r := testRules(f)
	f.Fuzz(func(t *testing.T, lang, src, def, rule string) {
		w := r.FindWriters(Catalog{
			Routines: []Routine{{Schema: "public", Name: "f", Language: lang, Source: src, Definition: def}, {Schema: "public", Name: "g", Language: "sql", Source: src}},
			Triggers: []Trigger{{Schema: "public", Table: "x", Name: "t", FunctionSchema: "public", Function: "f"}},
			Rules:    []RewriteRule{{Schema: "public", Table: "y", Name: "r", Definition: rule}},
		})
		for _, fn := range w.Functions {
			for _, tb := range fn.Tables {
				if r.tables[tb] == nil {
					t.Fatalf("writer %s writes unconfigured %q", fn.Name, tb)
				}
			}
		}
		r.WithWriters(w)
	})
}
