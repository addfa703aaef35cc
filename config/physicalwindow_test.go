package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParse_TablePhysicalWindow(t *testing.T) {
	base := "postgres: {upstream: 'db:5432'}\ncapture:\n  store: host=db\n  tables: [{table: public.docs, id: id, subjects: [user_id]"
	for name, tc := range map[string]struct {
		src    string
		window time.Duration
		err    string
	}{
		"unset: inside each forget": {src: base + ", physical: vacuum}]\n"},
		"vacuum":                    {src: base + ", physical: vacuum, physical_window: 1h}]\n", window: time.Hour},
		"scrub":                     {src: base + ", physical: scrub, physical_window: 15m}]\n", window: 15 * time.Minute},
		"zero: inside each forget":  {src: base + ", physical: scrub, physical_window: 0s}]\n"},
		"at the bound":              {src: base + ", physical: vacuum, physical_window: 23h50m}]\n", window: MaxPhysicalWindow},
		"a day: over the bound": {src: base + ", physical: vacuum, physical_window: 1d}]\n",
			err: "physical_window 24h0m0s is longer than 23h50m0s: the bytes a forget looks for are held in memory at most 24h0m0s"},
		"shorter than a minute": {src: base + ", physical: vacuum, physical_window: 30s}]\n", err: "physical_window 30s is shorter than 1m0s"},
		"negative":              {src: base + ", physical: vacuum, physical_window: -1h}]\n", err: "physical_window -1h0m0s is shorter than 1m0s"},
		"report has no step":    {src: base + ", physical: report, physical_window: 1h}]\n", err: `physical_window is set but physical is "report": only vacuum and scrub have a step to batch`},
		"physical off":          {src: base + ", physical_window: 1h}]\n", err: `physical_window is set but physical is "off"`},
		"not a duration":        {src: base + ", physical: vacuum, physical_window: nightly}]\n", err: `"nightly" is not a duration`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte(tc.src))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.window, cfg.Capture.Tables[0].BatchWindow())
		})
	}
}
