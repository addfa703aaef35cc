package pgwire

import (
	"bytes"
	"errors"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Observer is the narrow hook through which policy (the capture layer) sees a
// session's statements and the server's answers. A nil Observer makes the
// relay a pure byte pipe.
type Observer interface {
	// Open is called once per session, after the upstream has authenticated
	// the client. It returns the Session that observes that connection, or
	// nil to leave it unobserved (a pure byte pipe, as with no Observer).
	Open(info SessionInfo) Session
}

// Session observes one client connection. ClientMessage and ServerMessage
// are called from two different goroutines (one per direction) and may run
// concurrently; each is called sequentially in wire order for its direction.
type Session interface {
	// ClientMessage is called before a client message of one of the
	// ObservedClientTypes is forwarded. A non-nil Refusal keeps the message
	// from the server, which then fails it with the Refusal's error exactly as
	// if the statement had failed there (the transaction aborts, the rest of
	// an extended-protocol batch is skipped until Sync). Only Query, Parse,
	// Bind, Execute, Sync, CopyData and CopyDone may be refused; a refused
	// Sync is still sent, after the error, and ends the transaction (which
	// the error aborted).
	ClientMessage(m Message) *Refusal
	// ServerMessage is called before a server message of one of the
	// ObservedServerTypes is forwarded to the client.
	ServerMessage(m Message)
	// Close is called once, when the connection ends.
	Close()
}

// Waiter is implemented by a Session whose ClientMessage may wait before
// returning (capture waits at Sync for write-ahead intents still being made
// durable). WillWait is asked first, cheaply; when it says yes the relay
// forwards everything before that message, so that the server works on the
// statements already sent while the session waits.
type Waiter interface {
	WillWait(typ byte) bool
}

// Streamer is implemented by a Session that never refuses some of the
// message types it observes. The relay then forwards a large message of
// such a type as it arrives and shows it to ClientMessage once complete,
// instead of holding all of it first: the server receives a 100-row vector
// INSERT's ~600 KB Bind while the client is still sending it. A Session
// that refuses such a message anyway has its connection closed.
type Streamer interface {
	NeverRefuses(typ byte) bool
}

// ObservedClientTypes are the client message types a Session sees: Query,
// Parse, Bind, Execute, Sync, Close, CopyData, CopyDone, CopyFail.
const ObservedClientTypes = "QPBESCdcf"

// ObservedServerTypes are the server message types a Session sees:
// CommandComplete, EmptyQueryResponse, PortalSuspended (each ends one
// statement's execution), ReadyForQuery, ErrorResponse, ParameterStatus.
const ObservedServerTypes = "CIsZES"

// SessionInfo describes an authenticated session.
type SessionInfo struct {
	ID         uint64
	ClientAddr net.Addr
	User       string
	Database   string
	// Parameters are the client's startup parameters (application_name,
	// options, search_path given at startup...).
	Parameters map[string]string
	// ServerParameters are the settings the server reported with
	// ParameterStatus before its first ReadyForQuery (client_encoding,
	// standard_conforming_strings...). Later changes reach
	// Session.ServerMessage as ParameterStatus messages.
	ServerParameters map[string]string
}

// Message is one protocol message. Body excludes the 5-byte header and is only
// valid during the call that receives it; copy what must outlive the call.
type Message struct {
	Type byte
	Body []byte
}

// Query decodes a simple-protocol Query message.
func (m Message) Query() (string, error) {
	var q pgproto3.Query
	if err := m.decode('Q', &q); err != nil {
		return "", err
	}
	return q.String, nil
}

// Parse decodes a Parse message.
func (m Message) Parse() (pgproto3.Parse, error) {
	var p pgproto3.Parse
	err := m.decode('P', &p)
	return p, err
}

// Bind decodes a Bind message. Parameter values alias Body.
func (m Message) Bind() (pgproto3.Bind, error) {
	var b pgproto3.Bind
	err := m.decode('B', &b)
	return b, err
}

// BindTarget returns the destination portal and source statement names of
// a Bind message without decoding its parameters. Both alias Body.
func (m Message) BindTarget() (portal, statement []byte, err error) {
	if m.Type != 'B' {
		return nil, nil, fmt.Errorf("pgwire: message type %q is not 'B'", m.Type)
	}
	i := bytes.IndexByte(m.Body, 0)
	if i < 0 {
		return nil, nil, errors.New("pgwire: Bind without a portal name")
	}
	j := bytes.IndexByte(m.Body[i+1:], 0)
	if j < 0 {
		return nil, nil, errors.New("pgwire: Bind without a statement name")
	}
	return m.Body[:i], m.Body[i+1 : i+1+j], nil
}

// Execute decodes an Execute message.
func (m Message) Execute() (pgproto3.Execute, error) {
	var e pgproto3.Execute
	err := m.decode('E', &e)
	return e, err
}

// Close decodes a client Close message (of a statement or a portal).
func (m Message) Close() (pgproto3.Close, error) {
	var c pgproto3.Close
	err := m.decode('C', &c)
	return c, err
}

// CommandTag returns the tag of a server CommandComplete ("INSERT 0 3").
func (m Message) CommandTag() (string, error) {
	var c pgproto3.CommandComplete
	if err := m.decode('C', &c); err != nil {
		return "", err
	}
	return string(c.CommandTag), nil
}

// TxStatus returns the transaction status of a ReadyForQuery: 'I' idle, 'T'
// in a transaction block, 'E' in a failed transaction block.
func (m Message) TxStatus() (byte, error) {
	if m.Type != 'Z' || len(m.Body) != 1 {
		return 0, fmt.Errorf("pgwire: not a ReadyForQuery message (%q, %d bytes)", m.Type, len(m.Body))
	}
	return m.Body[0], nil
}

// ParameterStatus returns the setting a server ParameterStatus reports.
func (m Message) ParameterStatus() (name, value string, err error) {
	var p pgproto3.ParameterStatus
	if err := m.decode('S', &p); err != nil {
		return "", "", err
	}
	return p.Name, p.Value, nil
}

// Error decodes a server ErrorResponse.
func (m Message) Error() (pgproto3.ErrorResponse, error) {
	var e pgproto3.ErrorResponse
	err := m.decode('E', &e)
	return e, err
}

type decoder interface{ Decode([]byte) error }

func (m Message) decode(want byte, d decoder) error {
	if m.Type != want {
		return fmt.Errorf("pgwire: message type %q is not %q", m.Type, want)
	}
	return d.Decode(m.Body)
}

// Refusal is the error the server reports in place of a refused message.
// Message, Detail and Hint go to the client only, and may quote its
// statement; the proxy's log shows Code and LogReason.
type Refusal struct {
	Code    string // SQLSTATE, five characters [0-9A-Z]
	Message string
	Detail  string
	Hint    string
	// LogReason says why, for the log: it must hold no statement text,
	// row values or subjects. Empty: the log shows the code alone.
	LogReason string
	// EndSession ends the session with this error (severity FATAL)
	// instead of failing the one message: for input the observer cannot
	// follow. The message is not forwarded.
	EndSession bool
}
