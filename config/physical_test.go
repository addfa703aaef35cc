package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse_TablePhysical(t *testing.T) {
	base := "postgres: {upstream: 'db:5432'}\ncapture:\n  store: host=db\n  tables: [{table: public.docs, id: id, subjects: [user_id]"
	for name, tc := range map[string]struct {
		src     string
		reports bool
		err     string
	}{
		"default off": {base + "}]\n", false, ""},
		"off":         {base + ", physical: off}]\n", false, ""},
		"report":      {base + ", physical: report}]\n", true, ""},
		"unknown":     {base + ", physical: scrub}]\n", false, `physical "scrub" is not one of off, report`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte(tc.src))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.reports, cfg.Capture.Tables[0].Physical.Reports())
		})
	}
}
