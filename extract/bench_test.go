package extract

import (
	"fmt"
	"strings"
	"testing"
)

// benchInsert is a 100-row multi-row INSERT with $n parameters, the shape
// LangChain.js and langchain-postgres send, and its 300 text parameters.
func benchInsert() (string, Params) {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO docs (id, user_id, cmetadata) VALUES `)
	vals := make([]string, 0, 300)
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "($%d, $%d, $%d)", 3*i+1, 3*i+2, 3*i+3)
		vals = append(vals, fmt.Sprintf("doc-%d", i), fmt.Sprintf("user-%d", i%10),
			fmt.Sprintf(`{"user_id": "user-%d", "source": "file-%d.txt", "page": %d}`, i%10, i, i))
	}
	return sb.String(), textParams(vals...)
}

// BenchmarkMentions measures the prefilter on the 100-row INSERT text
// (about 1.6 kB): "hit" finds a configured name at the start, "miss" scans
// the whole text of a statement on another table.
func BenchmarkMentions(b *testing.B) {
	r := testRules(b)
	hit, _ := benchInsert()
	miss := strings.Replace(hit, "INSERT INTO docs", "INSERT INTO other_table", 1)
	miss = strings.ReplaceAll(miss, "user_id", "owner_ref")
	for name, sql := range map[string]string{"hit": hit, "miss": miss} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(sql)))
			b.ReportAllocs()
			for b.Loop() {
				r.Mentions(sql)
			}
		})
	}
}

func BenchmarkAnalyze(b *testing.B) {
	r := testRules(b)
	sql, _ := benchInsert()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Analyze(sql, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTags(b *testing.B) {
	r := testRules(b)
	sql, p := benchInsert()
	as, err := r.Analyze(sql, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := as[0].Tags(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCopyText(b *testing.B) {
	a := copyAnalysis(b, testRules(b), `COPY docs (id, user_id, cmetadata) FROM STDIN`)
	var sb strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&sb, "doc-%d\tuser-%d\t{\"user_id\": \"user-%d\"}\n", i, i%10, i%10)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d, _ := a.NewCopyDecoder()
		for off := 0; off < len(data); off += 8192 {
			if _, err := d.Write(data[off:min(off+8192, len(data))]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := d.End(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyzeInlineVectors analyses INSERTs with vectors and
// metadata inline as literals, which cannot be cached because every text
// differs: Supabase vecs' 500-row upsert of 384-dimension vectors, and one
// row of 1536 dimensions as psycopg2 sends a chat memory's add.
func BenchmarkAnalyzeInlineVectors(b *testing.B) {
	r := testRules(b)
	for _, shape := range []struct{ rows, dim int }{{500, 384}, {1, 1536}} {
		sql := inlineVectorInsert(shape.rows, shape.dim)
		b.Run(fmt.Sprintf("rows=%d/dim=%d", shape.rows, shape.dim), func(b *testing.B) {
			b.SetBytes(int64(len(sql)))
			b.ReportAllocs()
			for b.Loop() {
				as, err := r.Analyze(sql, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := as[0].Tags(Params{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkShapesInlineVector analyses one-row INSERTs of one shape with
// their 1536-dimension vector inline, as psycopg2 sends a chat memory's
// add: each text but the first reuses the shape's analysis.
func BenchmarkShapesInlineVector(b *testing.B) {
	c := testRules(b).Shapes()
	texts := []string{inlineVectorInsert(1, 1536), strings.Replace(inlineVectorInsert(1, 1536), "user-0", "user-1", 1)}
	b.SetBytes(int64(len(texts[0])))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		as, err := c.AnalyzeUnder(texts[i%2], nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := as[0].Tags(Params{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// inlineVectorInsert is an INSERT of rows vectors of dim dimensions as
// literals, with an upsert clause as Supabase vecs writes it (500 rows of
// 384 dimensions are about 1.7 MB).
func inlineVectorInsert(rows, dim int) string {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO vecs.docs (id, vec, metadata) VALUES `)
	for i := 0; i < rows; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "('doc-%d', '[", i)
		for d := 0; d < dim; d++ {
			if d > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "0.%06d", (i*dim+d)%999983)
		}
		fmt.Fprintf(&sb, `]', '{"user_id": "user-%d"}'::jsonb)`, i%10)
	}
	sb.WriteString(` ON CONFLICT (id) DO UPDATE SET vec = EXCLUDED.vec, metadata = EXCLUDED.metadata`)
	return sb.String()
}

// BenchmarkWriterFinder reads a catalog of 200 PL/pgSQL functions: "first"
// parses every body, "again" is the proxy's refresh a minute later, with
// nothing changed.
func BenchmarkWriterFinder(b *testing.B) {
	r := testRules(b)
	var c Catalog
	for i := range 200 {
		c.Routines = append(c.Routines, plpgsql(fmt.Sprintf("f%d", i), "void",
			`BEGIN UPDATE accounts SET n = n + 1 WHERE id = a; INSERT INTO audit (x) VALUES (a); END`))
	}
	b.Run("first", func(b *testing.B) {
		for range b.N {
			r.WriterFinder().Find(c)
		}
	})
	b.Run("again", func(b *testing.B) {
		f := r.WriterFinder()
		f.Find(c)
		b.ResetTimer()
		for range b.N {
			f.Find(c)
		}
	})
}
