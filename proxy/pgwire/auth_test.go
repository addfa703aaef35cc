package pgwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// saslBody is an AuthenticationSASL body offering mechs.
func saslBody(mechs ...string) []byte {
	b := binary.BigEndian.AppendUint32(nil, authSASL)
	for _, m := range mechs {
		b = append(append(b, m...), 0)
	}
	return append(b, 0)
}

func TestWithoutChannelBinding(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"PLUS first", saslBody("SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"), saslBody("SCRAM-SHA-256")},
		{"PLUS last", saslBody("SCRAM-SHA-256", "SCRAM-SHA-256-PLUS"), saslBody("SCRAM-SHA-256")},
		{"PLUS only", saslBody("SCRAM-SHA-256-PLUS"), saslBody()},
		{"PLUS twice, order of the rest kept", saslBody("A", "SCRAM-SHA-256-PLUS", "B", "SCRAM-SHA-256-PLUS", "C"), saslBody("A", "B", "C")},
		{"no PLUS", saslBody("SCRAM-SHA-256"), saslBody("SCRAM-SHA-256")},
		{"empty list", saslBody(), saslBody()},
		{"names that only look like PLUS are kept",
			saslBody("SCRAM-SHA-256-PLUSX", "scram-sha-256-plus", "XSCRAM-SHA-256-PLUS", "SCRAM-SHA-256-PLU"),
			saslBody("SCRAM-SHA-256-PLUSX", "scram-sha-256-plus", "XSCRAM-SHA-256-PLUS", "SCRAM-SHA-256-PLU")},
		{"malformed: last name without NUL", []byte("\x00\x00\x00\x0aSCRAM-SHA-256"), []byte("\x00\x00\x00\x0aSCRAM-SHA-256")},
		{"malformed after PLUS: unchanged, PLUS included",
			[]byte("\x00\x00\x00\x0aSCRAM-SHA-256-PLUS\x00SCRAM-SHA-256"),
			[]byte("\x00\x00\x00\x0aSCRAM-SHA-256-PLUS\x00SCRAM-SHA-256")},
		{"code only", []byte{0, 0, 0, 10}, []byte{0, 0, 0, 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Clone(tc.in)
			got := withoutChannelBinding(in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.in, in, "input modified")
		})
	}
}

func TestScramFlag(t *testing.T) {
	initial := func(mech, data string) []byte {
		b := append([]byte(mech), 0)
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		return append(b, data...)
	}
	cases := []struct {
		name string
		body []byte
		want byte
	}{
		{"client without binding support", initial("SCRAM-SHA-256", "n,,n=,r=rOprNGfwEbeRWgbNEkqO"), 'n'},
		{"client that supports binding, not offered", initial("SCRAM-SHA-256", "y,,n=,r=rOprNGfwEbeRWgbNEkqO"), 'y'},
		{"client using binding", initial("SCRAM-SHA-256-PLUS", "p=tls-server-end-point,,n=,r=abc"), 'p'},
		{"one byte of client-first-message", initial("SCRAM-SHA-256", "y"), 'y'},
		{"no initial response (length -1)", []byte("SCRAM-SHA-256\x00\xff\xff\xff\xff"), 0},
		{"length cut short", []byte("SCRAM-SHA-256\x00\x00\x00"), 0},
		{"no NUL after the mechanism", []byte("SCRAM-SHA-256"), 0},
		{"cleartext password message", []byte("hunter2\x00"), 0},
		{"empty", nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, string(rune(tc.want)), string(rune(scramFlag(tc.body))))
		})
	}
}

// authPeers are the test's ends of the two connections relayAuth runs
// between: the application (client) and a scripted PostgreSQL (server).
type authPeers struct {
	t      *testing.T
	client net.Conn // the application's end
	server net.Conn // the fake server's end
	fe     *pgproto3.Frontend
	done   chan authOutcome
	proxyC net.Conn
	proxyS net.Conn
}

type authOutcome struct {
	res authResult
	err error
}

// startRelayAuth runs relayAuth between two in-memory connections.
func startRelayAuth(t *testing.T, cb channelBinding) *authPeers {
	t.Helper()
	client, proxyC := net.Pipe()
	proxyS, server := net.Pipe()
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range []net.Conn{client, proxyC, proxyS, server} {
		require.NoError(t, c.SetDeadline(deadline))
		t.Cleanup(func() { c.Close() })
	}
	p := &authPeers{t: t, client: client, server: server, fe: pgproto3.NewFrontend(client, client),
		done: make(chan authOutcome, 1), proxyC: proxyC, proxyS: proxyS}
	go func() {
		res, err := relayAuth(proxyC, proxyS, cb)
		p.done <- authOutcome{res, err}
	}()
	return p
}

// serverSends writes one backend message from the fake server.
func (p *authPeers) serverSends(m pgproto3.BackendMessage) {
	p.t.Helper()
	b, err := m.Encode(nil)
	require.NoError(p.t, err)
	p.serverSendsRaw(b)
}

func (p *authPeers) serverSendsRaw(b []byte) {
	p.t.Helper()
	_, err := p.server.Write(b)
	require.NoError(p.t, err)
}

// serverReceives reads one frontend message at the fake server.
func (p *authPeers) serverReceives() (byte, []byte) {
	p.t.Helper()
	var hdr [headerLen]byte
	_, err := io.ReadFull(p.server, hdr[:])
	require.NoError(p.t, err)
	body := make([]byte, binary.BigEndian.Uint32(hdr[1:])-4)
	_, err = io.ReadFull(p.server, body)
	require.NoError(p.t, err)
	return hdr[0], body
}

func (p *authPeers) clientSends(m pgproto3.FrontendMessage) {
	p.t.Helper()
	b, err := m.Encode(nil)
	require.NoError(p.t, err)
	_, err = p.client.Write(b)
	require.NoError(p.t, err)
}

func (p *authPeers) clientReceives() pgproto3.BackendMessage {
	p.t.Helper()
	m, err := p.fe.Receive()
	require.NoError(p.t, err)
	return m
}

// clientReceivesRaw reads one message at the application as bytes.
func (p *authPeers) clientReceivesRaw() []byte {
	p.t.Helper()
	hdr := make([]byte, headerLen)
	_, err := io.ReadFull(p.client, hdr)
	require.NoError(p.t, err)
	body := make([]byte, binary.BigEndian.Uint32(hdr[1:])-4)
	_, err = io.ReadFull(p.client, body)
	require.NoError(p.t, err)
	return append(hdr, body...)
}

func (p *authPeers) outcome() authOutcome {
	p.t.Helper()
	select {
	case o := <-p.done:
		return o
	case <-time.After(10 * time.Second):
		p.t.Fatal("relayAuth did not return")
		return authOutcome{}
	}
}

// serverGotNothingMore checks that relayAuth wrote nothing more upstream
// before returning.
func (p *authPeers) serverGotNothingMore() {
	p.t.Helper()
	p.proxyS.Close()
	n, err := p.server.Read(make([]byte, 1))
	assert.Zero(p.t, n, "bytes reached the server")
	assert.ErrorIs(p.t, err, io.EOF)
}

func TestRelayAuth_RelaysCleartextPasswordExchange(t *testing.T) {
	p := startRelayAuth(t, channelBinding{})
	p.serverSends(&pgproto3.AuthenticationCleartextPassword{})
	require.IsType(t, &pgproto3.AuthenticationCleartextPassword{}, p.clientReceives())

	p.clientSends(&pgproto3.PasswordMessage{Password: "s3cret"})
	typ, body := p.serverReceives()
	assert.Equal(t, byte('p'), typ)
	assert.Equal(t, []byte("s3cret\x00"), body)

	p.serverSends(&pgproto3.AuthenticationOk{})
	require.IsType(t, &pgproto3.AuthenticationOk{}, p.clientReceives())
	p.serverSends(&pgproto3.ParameterStatus{Name: "server_version", Value: "15.8"})
	assert.Equal(t, &pgproto3.ParameterStatus{Name: "server_version", Value: "15.8"}, p.clientReceives())
	p.serverSends(&pgproto3.BackendKeyData{ProcessID: 4242, SecretKey: []byte{1, 2, 3, 4}})
	assert.Equal(t, &pgproto3.BackendKeyData{ProcessID: 4242, SecretKey: []byte{1, 2, 3, 4}}, p.clientReceives())
	p.serverSends(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	assert.Equal(t, &pgproto3.ReadyForQuery{TxStatus: 'I'}, p.clientReceives())

	o := p.outcome()
	require.NoError(t, o.err)
	assert.Equal(t, "\x00\x00\x10\x92\x01\x02\x03\x04", o.res.cancelKey)
	p.serverGotNothingMore()
}

func TestRelayAuth_RelaysMD5PasswordExchange(t *testing.T) {
	p := startRelayAuth(t, channelBinding{upstreamTLS: true})
	p.serverSends(&pgproto3.AuthenticationMD5Password{Salt: [4]byte{9, 8, 7, 6}})
	assert.Equal(t, &pgproto3.AuthenticationMD5Password{Salt: [4]byte{9, 8, 7, 6}}, p.clientReceives())
	p.clientSends(&pgproto3.PasswordMessage{Password: "md5a3556571e93b0d20722ba62be61e8c2d"})
	typ, body := p.serverReceives()
	assert.Equal(t, byte('p'), typ)
	assert.Equal(t, []byte("md5a3556571e93b0d20722ba62be61e8c2d\x00"), body)
	p.serverSends(&pgproto3.AuthenticationOk{})
	p.clientReceives()
	p.serverSends(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	p.clientReceives()
	require.NoError(t, p.outcome().err)
}

func TestRelayAuth_RelaysSCRAMAndHidesChannelBinding(t *testing.T) {
	cases := []struct {
		name     string
		cb       channelBinding
		offered  []string
		wantSeen []string
		flag     string
	}{
		{"plaintext upstream, PLUS removed", channelBinding{}, []string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}, []string{"SCRAM-SHA-256"}, "n,,"},
		{"TLS upstream, PLUS removed, client without binding", channelBinding{upstreamTLS: true},
			[]string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}, []string{"SCRAM-SHA-256"}, "n,,"},
		{"passthrough keeps PLUS", channelBinding{upstreamTLS: true, passthrough: true},
			[]string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}, []string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}, "p=tls-server-end-point,,"},
		{"passthrough lets a binding-capable client through", channelBinding{upstreamTLS: true, passthrough: true},
			[]string{"SCRAM-SHA-256"}, []string{"SCRAM-SHA-256"}, "y,,"},
		{"plaintext upstream lets a binding-capable client through", channelBinding{},
			[]string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}, []string{"SCRAM-SHA-256"}, "y,,"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startRelayAuth(t, tc.cb)
			p.serverSends(&pgproto3.AuthenticationSASL{AuthMechanisms: tc.offered})
			assert.Equal(t, &pgproto3.AuthenticationSASL{AuthMechanisms: tc.wantSeen}, p.clientReceives())

			first := &pgproto3.SASLInitialResponse{AuthMechanism: tc.wantSeen[0], Data: []byte(tc.flag + "n=,r=rOprNGfwEbeRWgbNEkqO")}
			wantFirst, err := first.Encode(nil)
			require.NoError(t, err)
			p.clientSends(first)
			typ, body := p.serverReceives()
			assert.Equal(t, wantFirst, msg(typ, body), "SASLInitialResponse changed on the way")

			p.serverSends(&pgproto3.AuthenticationSASLContinue{Data: []byte("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")})
			require.IsType(t, &pgproto3.AuthenticationSASLContinue{}, p.clientReceives())
			p.clientSends(&pgproto3.SASLResponse{Data: []byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")})
			typ, body = p.serverReceives()
			assert.Equal(t, byte('p'), typ)
			assert.True(t, bytes.HasPrefix(body, []byte("c=biws,")))

			// SASLFinal needs no answer: relayAuth must not wait for one.
			p.serverSends(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")})
			require.IsType(t, &pgproto3.AuthenticationSASLFinal{}, p.clientReceives())
			p.serverSends(&pgproto3.AuthenticationOk{})
			require.IsType(t, &pgproto3.AuthenticationOk{}, p.clientReceives())
			p.serverSends(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			require.IsType(t, &pgproto3.ReadyForQuery{}, p.clientReceives())
			require.NoError(t, p.outcome().err)
		})
	}
}

func TestRelayAuth_RefusesBindingCapableClientOverTLSUpstream(t *testing.T) {
	p := startRelayAuth(t, channelBinding{upstreamTLS: true})
	p.serverSends(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}})
	assert.Equal(t, &pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}}, p.clientReceives())
	p.clientSends(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("y,,n=,r=abc")})

	e, ok := p.clientReceives().(*pgproto3.ErrorResponse)
	require.True(t, ok, "client did not get an ErrorResponse")
	assert.Equal(t, "FATAL", e.Severity)
	assert.Equal(t, "28000", e.Code)
	assert.Contains(t, e.Message, "channel binding")
	assert.NotEmpty(t, e.Hint)

	o := p.outcome()
	require.Error(t, o.err)
	assert.Contains(t, o.err.Error(), "channel binding")
	p.serverGotNothingMore()
}

func TestRelayAuth_ForwardsServerErrorAndFails(t *testing.T) {
	fatal := &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "28P01",
		Message: `password authentication failed for user "bob"`, File: "auth.c", Line: 326, Routine: "auth_failed"}
	cases := []struct {
		name   string
		before func(p *authPeers)
	}{
		{"after the password", func(p *authPeers) {
			p.serverSends(&pgproto3.AuthenticationCleartextPassword{})
			p.clientReceives()
			p.clientSends(&pgproto3.PasswordMessage{Password: "wrong"})
			p.serverReceives()
		}},
		{"before any authentication request", func(*authPeers) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startRelayAuth(t, channelBinding{})
			tc.before(p)
			p.serverSends(fatal)
			assert.Equal(t, fatal, p.clientReceives())
			o := p.outcome()
			require.Error(t, o.err)
			assert.Contains(t, o.err.Error(), `password authentication failed for user "bob"`)
			p.serverGotNothingMore()
		})
	}
}

func TestRelayAuth_RecordsBackendKeyDataAsCancelKey(t *testing.T) {
	key32 := bytes.Repeat([]byte{0xa5, 0x5a, 0, 0xff}, 8)
	cases := []struct {
		name string
		body []byte
	}{
		{"protocol 3.0: 4-byte secret", append([]byte{0, 0, 0x30, 0x39}, 0xde, 0xad, 0xbe, 0xef)},
		{"protocol 3.2: 32-byte secret", append([]byte{0, 0, 0x30, 0x39}, key32...)},
		{"protocol 3.2: 256-byte secret", append([]byte{0, 0, 0x30, 0x39}, bytes.Repeat([]byte{7}, 256)...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startRelayAuth(t, channelBinding{})
			p.serverSends(&pgproto3.AuthenticationOk{})
			p.clientReceives()
			p.serverSendsRaw(msg('K', tc.body))
			assert.Equal(t, msg('K', tc.body), p.clientReceivesRaw(), "BackendKeyData changed on the way")
			p.serverSends(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			p.clientReceives()
			o := p.outcome()
			require.NoError(t, o.err)
			assert.Equal(t, string(tc.body), o.res.cancelKey)
		})
	}
}

func TestRelayAuth_FailsOnBrokenServer(t *testing.T) {
	cases := []struct {
		name string
		send []byte
	}{
		{"short BackendKeyData", msg('K', []byte{0, 0, 0, 1, 2, 3, 4})},
		{"short authentication request", msg('R', []byte{0, 0})},
		{"message over the startup-phase limit", rawHeader('S', maxAuthMessageLength+1)},
		{"impossible length", rawHeader('R', 3)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startRelayAuth(t, channelBinding{})
			p.serverSendsRaw(tc.send)
			o := p.outcome()
			require.Error(t, o.err)
			// Nothing of a broken message reaches the client.
			p.proxyC.Close()
			n, err := p.client.Read(make([]byte, 1))
			assert.Zero(t, n)
			assert.True(t, errors.Is(err, io.EOF), "client read: %v", err)
		})
	}
	t.Run("server closes during authentication", func(t *testing.T) {
		p := startRelayAuth(t, channelBinding{})
		p.serverSends(&pgproto3.AuthenticationOk{})
		p.clientReceives()
		p.server.Close()
		o := p.outcome()
		require.Error(t, o.err)
		assert.ErrorIs(t, o.err, io.EOF)
	})
}

func TestRelayAuth_RefusesGSSAPIClearlyInsteadOfHanging(t *testing.T) {
	// A GSSAPI exchange can end with a server token (in
	// AuthenticationGSSContinue) that the client does not answer, which a
	// message-by-message relay cannot tell apart from one it must wait for.
	// The relay refuses GSSAPI/SSPI at once with a clear error.
	for name, req := range map[string]pgproto3.BackendMessage{
		"GSS":         &pgproto3.AuthenticationGSS{},
		"GSSContinue": &pgproto3.AuthenticationGSSContinue{Data: []byte("AP-REP")},
	} {
		t.Run(name, func(t *testing.T) {
			p := startRelayAuth(t, channelBinding{})
			p.serverSends(req)
			msg := p.clientReceives()
			er, ok := msg.(*pgproto3.ErrorResponse)
			require.True(t, ok, "got %T", msg)
			assert.Equal(t, "28000", er.Code)
			assert.Contains(t, er.Message, "GSSAPI/SSPI (Kerberos) authentication is not supported")
			require.Error(t, p.outcome().err)
		})
	}
}
