// Package adminclient is the admin API's client, as the lethe-proxy forget
// and log commands use it: a bearer token from a file or the environment,
// one call per endpoint, the API's error answers as errors that carry the
// server's message, the subject read from stdin (never from a flag), and
// the answers rendered for a person.
//
// The server side (package admin) holds no client code, and this package
// no forget logic: it sends what it is given and renders what comes back.
package adminclient
