package certificate

import "testing"

// BenchmarkVerify measures a full verification of a valid certificate: two
// Ed25519 verifications (payload, checkpoint), JSON parsing and the
// inclusion proof. Run: go test -run '^$' -bench Verify -cpu 1 ./certificate/
func BenchmarkVerify(b *testing.B) {
	f := newFixture(b)
	data := operatorCert(nil)(b, f)
	if r := Verify(data, f.keys, testNow); !r.Valid() {
		b.Fatalf("%s: %s", r.Verdict, r.Reason)
	}
	b.ReportAllocs()
	for b.Loop() {
		Verify(data, f.keys, testNow)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifications/s")
}
