// Package controlplane relays Pinecone's control plane (api.pinecone.io, or
// Pinecone Local's) so that SDKs which look an index's host up there reach
// the index through the proxy's data-plane relay (proxy/pinecone).
//
// The Node SDK resolves an index's host with describe index
// (GET /indexes/{name}) before its first data-plane call, even for some
// calls made on an index object given a host (upsertRecords in 5.x), and
// go-pinecone applications pass DescribeIndex's or ListIndexes' host to
// Client.Index. Pointed at this relay (Node: controllerHostUrl;
// go-pinecone: NewClientParams.Host), they are answered with the proxy's
// advertised data-plane address as the host of every configured index.
//
// Contract:
//   - 200 answers to GET /indexes (list indexes) and GET /indexes/{name}
//     (describe index) have "host", and "private_host" when present,
//     replaced for the indexes named in Config.Hosts; every other member
//     keeps its bytes. Indexes not in Config.Hosts keep their real host.
//   - Such an answer is read whole, up to Config.MaxAnswerBytes; one larger,
//     not JSON, or in a content coding the relay cannot read is refused
//     (502, the control plane's error shape), never passed on unrewritten:
//     passing it would send the SDK around the proxy without a word.
//   - Every other request and answer (create, configure, delete, backups,
//     collections, inference, errors, describe of an unconfigured index)
//     passes untouched and streams; the client's headers reach the upstream
//     (Api-Key included) except hop-by-hop ones, and no X-Forwarded-* is
//     added. An upstream agreeing to a protocol upgrade (101) is answered
//     502: the control plane has none, and a tunnel would carry answers no
//     rewrite sees.
//   - Nothing logged carries a header value: the API key is never logged.
package controlplane
