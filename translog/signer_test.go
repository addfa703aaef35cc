package translog

import (
	"context"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

func TestLog_SignerChangedAfterRotation(t *testing.T) {
	ctx := context.Background()
	storage := &MemoryStorage{}
	newSigner := func() note.Signer {
		skey, _, err := note.GenerateKey(nil, "example.com/log")
		if err != nil {
			t.Fatal(err)
		}
		s, err := note.NewSigner(skey)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first, second := newSigner(), newSigner()
	l, err := New(storage, first, "example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := l.SignerChanged(ctx); err != nil || !changed {
		t.Fatalf("empty log: changed=%v err=%v, want true (the first key is news)", changed, err)
	}
	if _, err := l.Append(ctx, []byte("r0")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Sign(ctx); err != nil {
		t.Fatal(err)
	}
	if changed, err := l.SignerChanged(ctx); err != nil || changed {
		t.Fatalf("same key: changed=%v err=%v, want false", changed, err)
	}
	rotated, err := New(storage, second, "example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := rotated.SignerChanged(ctx); err != nil || !changed {
		t.Fatalf("new key: changed=%v err=%v, want true", changed, err)
	}
	if _, err := rotated.Append(ctx, []byte("r1")); err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.Sign(ctx); err != nil {
		t.Fatal(err)
	}
	if changed, err := rotated.SignerChanged(ctx); err != nil || changed {
		t.Fatalf("after signing with the new key: changed=%v err=%v, want false", changed, err)
	}
}
