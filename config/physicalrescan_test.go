package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParse_TablePhysicalRescan(t *testing.T) {
	base := "postgres: {upstream: 'db:5432'}\ncapture:\n  store: host=db\n  tables: [{table: public.docs, id: id, subjects: [user_id]"
	for name, tc := range map[string]struct {
		src   string
		every time.Duration
		err   string
	}{
		"physical off":            {src: base + "}]\n"},
		"default with report":     {src: base + ", physical: report}]\n", every: DefaultPhysicalRescan},
		"set":                     {src: base + ", physical: scrub, physical_rescan: 1h}]\n", every: time.Hour},
		"zero: never":             {src: base + ", physical: vacuum, physical_rescan: 0s}]\n"},
		"shorter than a minute":   {src: base + ", physical: report, physical_rescan: 10s}]\n", err: "physical_rescan 10s is shorter than 1m0s"},
		"without a physical scan": {src: base + ", physical_rescan: 10m}]\n", err: `physical_rescan is set but physical is "off"`},
		"not a duration":          {src: base + ", physical: report, physical_rescan: often}]\n", err: `"often" is not a duration`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte(tc.src))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.every, cfg.Capture.Tables[0].RescanEvery())
		})
	}
}
