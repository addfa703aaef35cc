package certificate

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLoadPrivateKey_ReadsWhatMarshalWrites(t *testing.T) {
	s, err := GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := s.MarshalPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pemBytes, []byte("-----BEGIN PRIVATE KEY-----\n")) {
		t.Errorf("not PKCS#8 PEM:\n%s", pemBytes)
	}
	back, err := LoadPrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	if back.KeyID() != s.KeyID() || !back.Public().Equal(s.Public()) {
		t.Errorf("loaded key %s, want %s", back.KeyID(), s.KeyID())
	}
}

func TestLoadPrivateKey_RefusesOtherInput(t *testing.T) {
	for _, tc := range []struct{ name, pem string }{
		{"empty", ""},
		{"public key block", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n"},
		{"garbage in a private key block", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LoadPrivateKey([]byte(tc.pem)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestKeyID_IsPrefixedTruncatedSHA256(t *testing.T) {
	id := testSigner(t, "operator").KeyID()
	if !keyIDPattern.MatchString(id) {
		t.Errorf("key id %q, want ed25519: and 32 hex digits", id)
	}
}

func TestParseKeySet(t *testing.T) {
	op, next := testSigner(t, "operator"), testSigner(t, "operator-next")
	entry := func(s *Signer, extra string) string {
		return fmt.Sprintf(`{"key_id":%q,"public_key":%q,"not_before":"2026-01-01T00:00:00Z"%s}`,
			s.KeyID(), base64.StdEncoding.EncodeToString(s.Public()), extra)
	}
	for _, tc := range []struct {
		name, file string
		wantErr    string
	}{
		{name: "one key", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, "") + `]}`},
		{name: "rotated keys", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, `,"not_after":"2026-09-01T00:00:00Z"`) + `,` + entry(next, "") + `]}`},
		{name: "empty", file: `{"log_origin":"log.lethe.example/test","keys":[]}`, wantErr: "empty"},
		{name: "not JSON", file: `keys: []`, wantErr: "trusted keys"},
		{name: "unknown member", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, `,"comment":"x"`) + `]}`, wantErr: "comment"},
		{name: "key id of another key", file: strings.Replace(`{"log_origin":"log.lethe.example/test","keys":[`+entry(op, "")+`]}`, op.KeyID(), next.KeyID(), 1), wantErr: "does not match"},
		{name: "listed twice", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, "") + `,` + entry(op, "") + `]}`, wantErr: "twice"},
		{name: "short public key", file: `{"log_origin":"log.lethe.example/test","keys":[{"key_id":"ed25519:00","public_key":"AAAA","not_before":"2026-01-01T00:00:00Z"}]}`, wantErr: "3 bytes"},
		{name: "window ends before it starts", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, `,"not_after":"2025-01-01T00:00:00Z"`) + `]}`, wantErr: "not_after"},
		{name: "no log origin", file: `{"keys":[` + entry(op, "") + `]}`, wantErr: `member "log_origin" is missing`},
		{name: "log origin with a space", file: `{"log_origin":"my log","keys":[` + entry(op, "") + `]}`, wantErr: "log origin"},
		{name: "member name in upper case", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, `,"NOT_AFTER":null`) + `]}`, wantErr: `unknown member "keys[0].NOT_AFTER"`},
		{name: "not_after null", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, `,"not_after":null`) + `]}`, wantErr: "keys[0].not_after is not a string"},
		{name: "member repeated", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, `,"not_after":"2026-09-01T00:00:00Z","not_after":"2099-01-01T00:00:00Z"`) + `]}`, wantErr: "appears twice"},
		{name: "impossible date", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, `,"not_after":"2026-02-30T00:00:00Z"`) + `]}`, wantErr: "no such date"},
		{name: "year one", file: `{"log_origin":"log.lethe.example/test","keys":[` + entry(op, `,"not_after":"0001-01-01T00:00:00Z"`) + `]}`, wantErr: "1970"},
		{name: "small-order key", file: weakKeyFile("0100000000000000000000000000000000000000000000000000000000000000"), wantErr: "small order"},
		{name: "order-8 key with the sign bit", file: weakKeyFile("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"), wantErr: "small order"},
		{name: "non-canonical key", file: weakKeyFile("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), wantErr: "canonical"},
		{name: "no not_before", file: fmt.Sprintf(`{"log_origin":"log.lethe.example/test","keys":[{"key_id":%q,"public_key":%q}]}`, op.KeyID(), base64.StdEncoding.EncodeToString(op.Public())), wantErr: "not_before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := ParseKeySet([]byte(tc.file))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ks.Lookup(op.KeyID()); !ok {
				t.Error("operator key not found")
			}
		})
	}
}

func TestKeySet_MarshalJSONParsesBack(t *testing.T) {
	f := newFixture(t)
	data, err := f.keys.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseKeySet(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	k, _ := back.Lookup(f.op.KeyID())
	if !k.NotAfter.Equal(testRotation) || !k.PublicKey.Equal(f.op.Public()) {
		t.Errorf("round trip lost data: %+v\n%s", k, data)
	}
}

func TestTrustedKey_CoversItsWindowInclusive(t *testing.T) {
	k := TrustedKey{NotBefore: testIssued, NotAfter: testRotation}
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{testIssued.Add(-time.Second), false},
		{testIssued, true},
		{testRotation, true},
		{testRotation.Add(time.Second), false},
	} {
		if got := k.Covers(tc.at); got != tc.want {
			t.Errorf("Covers(%s) = %t, want %t", tc.at, got, tc.want)
		}
	}
	if open := (TrustedKey{NotBefore: testIssued}); !open.Covers(testIssued.AddDate(100, 0, 0)) {
		t.Error("a key without not_after stopped covering")
	}
}

// weakKeyFile is a keys file trusting the public key of the given hex
// encoding, under its correct id.
func weakKeyFile(pubHex string) string {
	pub, err := hex.DecodeString(pubHex)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf(`{"log_origin":"log.lethe.example/test","keys":[{"key_id":%q,"public_key":%q,"not_before":"2026-01-01T00:00:00Z"}]}`,
		KeyID(pub), base64.StdEncoding.EncodeToString(pub))
}
