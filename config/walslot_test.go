package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefaultName_IsAValidSlotNamePerDatabase(t *testing.T) {
	long := strings.Repeat("a", 60)
	for _, tc := range []struct{ database, want string }{
		{"app", "lethe_app"},
		{"lethe_test", "lethe_lethe_test"},
		{"", "lethe"},
		{"App", "lethe__pp_"},        // prefix; the hash follows
		{"my-app", "lethe_my_app_"},  // prefix; the hash follows
		{"crème", "lethe_cr_me_"},    // prefix; the hash follows
		{long, "lethe_" + long[:35]}, // prefix; the hash follows
	} {
		got := DefaultSlotName(tc.database)
		require.NoError(t, ValidSlotName(got), "%q → %q", tc.database, got)
		require.True(t, strings.HasPrefix(got, tc.want), "%q → %q, want %q…", tc.database, got, tc.want)
		require.Equal(t, got, DefaultSlotName(tc.database), "the same database, the same name")
	}
	// Databases that sanitize alike keep names of their own.
	names := map[string]string{}
	for _, db := range []string{"my_app", "my-app", "My_app", "my.app", long, long + "b"} {
		n := DefaultSlotName(db)
		require.NotContains(t, names, n, "%q and %q share %q", names[n], db, n)
		names[n] = db
	}
}
