package config

import "slices"

// refusedKeys are keys a config file may not set, each with what to write
// instead: keys that overlapped another and were accepted and ignored.
var refusedKeys = map[string]string{
	"forget.admin.tls.required": "the admin API serves TLS alone once forget.admin.tls.cert_file and key_file are set, " +
		"and plain HTTP without them: remove required, and set cert_file and key_file to require TLS",
}

// refusedKeysSet returns an error for each refused key the file sets,
// naming what to write instead.
func (c *Config) refusedKeysSet() []error {
	var errs []error
	keys := make([]string, 0, len(refusedKeys))
	for key := range refusedKeys {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if _, set := c.lines[key]; set {
			errs = append(errs, c.at(key, "is not a setting: %s", refusedKeys[key]))
		}
	}
	return errs
}
