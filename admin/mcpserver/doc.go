// Package mcpserver is `lethe-proxy mcp`: Lethe's forget as tools for AI
// agents over the Model Context Protocol (modelcontextprotocol.io,
// github.com/modelcontextprotocol/go-sdk), on stdio or on streamable HTTP
// in stateless mode, so that any of several replicas can answer any call.
//
// It is a client of the admin API (admin/adminclient) and holds no forget
// logic: every tool is one or two admin API calls, made with the caller's
// own bearer token, and the token's role (GET /v1/whoami) decides the tools
// offered. An auditor's token is offered the read-only tools (status,
// certificate, verify) and the transparency log's checkpoint as a
// resource; an operator's token also preview, forget and reverify.
//
// Personal data stays out of the agent's transcript: the tools that act on
// a person take a subject reference (References), an opaque, sealed and
// expiring string that preview returns, or that an operator makes beside
// the agent with `lethe-proxy mcp ref`; forget hands back the data
// subject's secret sealed the same way. Tool calls are logged by tool
// name, caller, outcome and duration, never by their arguments.
package mcpserver
