package pgwing

import (
	"bytes"
	"testing"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// lethe-proxy wal status: a slot a proxy can follow is one line of state
// and one of tables; a missing or lost one says what happens or what to
// do, and is not followable (the command exits 1).
func TestWriteSlotStatus_SaysWhatToDoWithAMissingOrLostSlot(t *testing.T) {
	for _, tc := range []struct {
		name       string
		slot       walfollow.Slot
		want       string
		followable bool
	}{
		{"followed", walfollow.Slot{Name: "lethe_app", Exists: true, Active: true, Status: "reserved", Retained: 4096, Lag: 12, Tables: []string{"public.docs", "public.docs_log (inserts only)"}},
			"slot lethe_app: active=true wal_status=reserved wal_kept_bytes=4096 lag_bytes=12\ntables: public.docs, public.docs_log (inserts only)\n", true},
		{"missing", walfollow.Slot{Name: "lethe_app"},
			"slot lethe_app: does not exist (a proxy with capture.wal: on makes it at start)\n", false},
		{"lost", walfollow.Slot{Name: "lethe_app", Exists: true, Status: "lost", Tables: []string{"public.docs"}},
			"slot lethe_app: active=false wal_status=lost wal_kept_bytes=0 lag_bytes=0\ntables: public.docs\n" +
				"the slot lost WAL it needed (max_slot_wal_keep_size): drop it (lethe-proxy wal drop) and restart the proxies\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if got := WriteSlotStatus(&out, tc.slot); got != tc.followable || out.String() != tc.want {
				t.Errorf("WriteSlotStatus = %t, wrote\n%q\nwant %t and\n%q", got, out.String(), tc.followable, tc.want)
			}
		})
	}
}

// --slot overrides capture.wal_slot, and only with a name PostgreSQL takes.
func TestSlotName_TheFlagOverridesTheConfigOnlyWithAValidName(t *testing.T) {
	c := config.Capture{WALSlot: "lethe_app"}
	if got, err := SlotName(c, ""); got != "lethe_app" || err != nil {
		t.Errorf("no --slot: %q, %v; want capture.wal_slot", got, err)
	}
	if got, err := SlotName(c, "lethe_other"); got != "lethe_other" || err != nil {
		t.Errorf("--slot lethe_other: %q, %v", got, err)
	}
	if _, err := SlotName(c, "Bad-Name"); err == nil {
		t.Error("--slot Bad-Name: no error")
	}
}
