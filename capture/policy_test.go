package capture

import (
	"testing"

	"github.com/lethe-privacy/lethe/ledger"
)

// The adapters ask these questions and translate the answers; the mode is
// read here only.
func TestPolicy_ModeDecidesUnattributableAndUnreadableWritesOnly(t *testing.T) {
	own := Refusal{Code: "LT004", Message: "m", Hint: "h", LogReason: "unknown request"}
	for _, tc := range []struct {
		mode                               Mode
		wantUnattributable, wantUnreadable bool
	}{
		{Strict, true, true},
		{Permissive, false, false},
		{"", true, true}, // Strict when unset
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			c := New(Config{Mode: tc.mode})
			defer c.Close()
			u := c.Unattributable("msg", "hint", "why")
			if (u != nil) != tc.wantUnattributable {
				t.Fatalf("Unattributable = %+v, want a refusal: %v", u, tc.wantUnattributable)
			}
			if u != nil && (u.Code != CodeUnattributed || u.Message != "msg" || u.Hint != "hint" || u.LogReason != "unattributable write: why") {
				t.Errorf("Unattributable = %+v", u)
			}
			r := c.Unreadable(own)
			if (r != nil) != tc.wantUnreadable {
				t.Fatalf("Unreadable = %+v, want a refusal: %v", r, tc.wantUnreadable)
			}
			if r != nil && *r != own {
				t.Errorf("Unreadable = %+v, want the relay's own %+v", *r, own)
			}
			// Refused in every mode: reading differently, coverage, a relay's own.
			if r := c.RefuseUnattributed("msg", "hint", "why"); r == nil || r.Code != CodeUnattributed {
				t.Errorf("RefuseUnattributed = %+v", r)
			}
			if r := c.Refuse(own); r == nil || *r != own {
				t.Errorf("Refuse = %+v", r)
			}
			if r := c.RefuseUncovered("public.t", "no rule"); r == nil || r.Code != CodeUncovered {
				t.Errorf("RefuseUncovered = %+v", r)
			}
			want := int64(2)
			if tc.wantUnattributable {
				want += 2
			}
			if got := c.Stats.Refused.Load(); got != want {
				t.Errorf("Stats.Refused = %d, want %d", got, want)
			}
			if got := c.Stats.RefusedUncovered.Load(); got != 1 {
				t.Errorf("Stats.RefusedUncovered = %d, want 1", got)
			}
		})
	}
}

// The WAL follower asks the core, not the tombstones, whether a committed
// row's subject was forgotten.
func TestPolicy_ForgottenAnswersFromTheTombstones(t *testing.T) {
	var carol, dave ledger.SubjectHash
	carol[0], dave[0] = 1, 2
	none := New(Config{})
	defer none.Close()
	if none.Forgotten(carol) {
		t.Error("Forgotten without tombstones = true")
	}
	tombs := NewTombstones()
	c := New(Config{Tombstones: tombs})
	defer c.Close()
	tombs.Set(carol, true)
	if !c.Forgotten(carol) || c.Forgotten(dave) {
		t.Errorf("Forgotten(carol) = %v, Forgotten(dave) = %v; want true, false", c.Forgotten(carol), c.Forgotten(dave))
	}
	tombs.Set(carol, false)
	if c.Forgotten(carol) {
		t.Error("Forgotten after the tombstone was lifted = true")
	}
}
