package certificate

import (
	"bytes"
	"testing"
)

func TestCheckCommitment(t *testing.T) {
	secret, c := NewCommitment("alice@example.com")
	other, _ := NewCommitment("alice@example.com")
	for _, tc := range []struct {
		name       string
		subject    string
		secret     []byte
		commitment string
		want       bool
	}{
		{"the subject with their secret", "alice@example.com", secret[:], c, true},
		{"another subject", "bob@example.com", secret[:], c, false},
		{"subject differing in case", "Alice@example.com", secret[:], c, false},
		{"another secret", "alice@example.com", other[:], c, false},
		{"a short secret", "alice@example.com", secret[:31], c, false},
		{"no secret", "alice@example.com", nil, c, false},
		{"commitment in upper case", "alice@example.com", secret[:], string(bytes.ToUpper([]byte(c))), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CheckCommitment(tc.subject, tc.secret, tc.commitment); got != tc.want {
				t.Errorf("CheckCommitment = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestNewCommitment_HidesTheSubject(t *testing.T) {
	// A fresh secret each time: two certificates about one person share no value.
	s1, c1 := NewCommitment("alice@example.com")
	s2, c2 := NewCommitment("alice@example.com")
	if s1 == s2 || c1 == c2 {
		t.Error("two commitments to the same subject are equal")
	}
}

func TestCommit_MatchesTheSpec(t *testing.T) {
	// hex(SHA-256("lethe-subject-commitment-v1" || 0x00 || secret || subject)),
	// secret = 32 bytes of 0x01, subject "alice@example.com"; computed with
	// (printf 'lethe-subject-commitment-v1\0'; for i in $(seq 32); do printf '\1'; done; printf alice@example.com) | sha256sum
	const want = "1cd130b639df4cb114b72bc7c6a9a4e2d53b72ccdbd014409c09e3f6d71d8de9"
	got := commit("alice@example.com", bytes.Repeat([]byte{1}, 32))
	if got != want {
		t.Errorf("commitment %s, want %s", got, want)
	}
}
