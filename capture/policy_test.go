package capture

import "testing"

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
