package pgstore

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

func TestPageMatcher_FindsEachKindAtAnyOffset(t *testing.T) {
	m := newPageMatcher()
	m.add([]byte("0123456789abcdef"), true)
	m.add([]byte("al"), false) // shorter than 4 bytes: found by bytes.Index
	m.add([]byte("alice@example.org"), false)
	for _, tc := range []struct {
		name            string
		page            string
		vector, subject bool
	}{
		{"nothing", "xxxxxxxxxxxxxxxxxxxxxxxx", false, false},
		{"vector at an odd offset", "x0123456789abcdefx", true, false},
		{"a vector prefix only", "x0123456789abcdex", false, false},
		{"short subject", "xxalxx", false, true},
		{"both, subject at the end", "0123456789abcdefalice@example.org", true, true},
		{"vector at the very end", "yyy0123456789abcdef", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, s := m.find([]byte(tc.page))
			if v != tc.vector || s != tc.subject {
				t.Fatalf("find(%q) = %v, %v; want %v, %v", tc.page, v, s, tc.vector, tc.subject)
			}
		})
	}
}

func TestFingerprint_VectorFragmentsAsStoredLittleEndian(t *testing.T) {
	// vector_send of [1.5, 2]: dim 2, unused 0, big-endian floats.
	sent := []byte{0, 2, 0, 0, 0x3f, 0xc0, 0, 0, 0x40, 0, 0, 0}
	f := newFingerprint("s")
	f.addStored(storedTypes["vector"], sent)
	// A short vector is looked for whole, with its header, as on disk.
	disk := []byte{2, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0x40}
	if v, _ := f.match.find(append([]byte{0x80, 0x99}, disk...)); !v {
		t.Fatal("the stored form of [1.5, 2] is not found")
	}

	// A long vector: a fragment every fragmentStride bytes and the tail,
	// so that any 2 kB piece of it (a TOAST chunk) holds one.
	dims := 768
	sent = make([]byte, 4+4*dims)
	binary.BigEndian.PutUint16(sent, uint16(dims))
	stored := make([]byte, 4*dims)
	for i := range dims {
		bits := math.Float32bits(float32(i) + 0.25)
		binary.BigEndian.PutUint32(sent[4+4*i:], bits)
		binary.LittleEndian.PutUint32(stored[4*i:], bits)
	}
	f = newFingerprint("s")
	f.addStored(storedTypes["vector"], sent)
	for start := 0; start+1996 <= len(stored); start += 37 {
		if v, _ := f.match.find(stored[start : start+1996]); !v {
			t.Fatalf("a 1996-byte piece of the vector at %d is not recognised", start)
		}
	}
	if v, _ := f.match.find(stored[len(stored)-fragmentLen:]); !v {
		t.Fatal("the vector's last bytes are not recognised")
	}
}

func TestFingerprint_SubjectAlsoAsJSONText(t *testing.T) {
	f := newFingerprint(`a"b`)
	if _, s := f.match.find([]byte(`{"who": "a\"b"}`)); !s {
		t.Fatal("the subject as a json column keeps it (escaped) is not found")
	}
}

func TestPhysicalScan_BlocksToScan(t *testing.T) {
	p := PhysicalScan{FullScanPages: 10, SamplePages: 5}
	blocks, coverage := p.blocksToScan(pageRelation{pages: 10, heap: true}, nil)
	if coverage != coverageAll || len(blocks) != 10 || blocks[9] != 9 {
		t.Fatalf("a small relation: %v %s", blocks, coverage)
	}
	held := map[int64]bool{3: true, 999: true, 5000: true} // 5000 is past the end
	blocks, coverage = p.blocksToScan(pageRelation{pages: 1000, heap: true}, held)
	if coverage != coverageSample || len(blocks) != 7 {
		t.Fatalf("a large heap: %d blocks %s, want the 2 held in range and 5 sampled", len(blocks), coverage)
	}
	in := map[int64]bool{}
	for _, b := range blocks {
		in[b] = true
	}
	if !in[3] || !in[999] || in[5000] {
		t.Fatalf("a large heap's held blocks are read (and none past its end): %v", blocks)
	}
	blocks, _ = p.blocksToScan(pageRelation{pages: 1000}, nil)
	if len(blocks) != 5 {
		t.Fatalf("an index of a large table: %d blocks, want the 5 sampled", len(blocks))
	}
	blocks, _ = PhysicalScan{FullScanPages: 2, SamplePages: 100}.blocksToScan(pageRelation{pages: 4}, nil)
	if len(blocks) != 4 {
		t.Fatalf("a sample larger than the relation reads it once: %v", blocks)
	}
}

func TestLayer_FingerprintsOfForgetsThatNeverScanAreDropped(t *testing.T) {
	l := &Layer{}
	if l.fingerprintFor("alice", time.Unix(0, 0)) != nil {
		t.Fatal("a layer that does not report keeps no bytes")
	}
	l.ReportPhysical(DefaultPhysicalScan)
	t0 := time.Unix(1000, 0)
	a := l.fingerprintFor("alice", t0)
	if again := l.fingerprintFor("alice", t0.Add(fingerprintKept)); again != a {
		t.Fatal("a later attempt of the same forget adds to the same bytes")
	}
	l.fingerprintFor("bob", t0.Add(fingerprintKept+time.Second))
	if len(l.prints) != 2 {
		t.Fatalf("alice was touched %v ago: kept; got %d fingerprints", time.Second, len(l.prints))
	}
	l.fingerprintFor("bob", t0.Add(2*fingerprintKept+time.Second))
	if _, ok := l.prints["alice"]; ok || len(l.prints) != 1 {
		t.Fatalf("alice's bytes, untouched for over %v, are still held", fingerprintKept)
	}
}
