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

func BenchmarkMentions(b *testing.B) {
	r := testRules(b)
	sql, _ := benchInsert()
	b.ReportAllocs()
	for b.Loop() {
		r.Mentions(sql)
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
