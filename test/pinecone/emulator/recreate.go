package emulator

// Recreate stands for deleting the index and creating it again under the
// same name and host, or for the host answering for another index (one
// created from a backup): every record is dropped at once, the dimension
// is the configured one again, and the log sequence numbers start again
// from the first, as a new index's do. Pinecone documents that it assigns
// each write a "monotonically increasing" LSN; a new index has seen no
// write. Records written to it afterwards (a restore putting them back)
// are written as any upsert.
func (s *Server) Recreate() {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	st.namespaces = map[string]map[string]*record{}
	st.pending = map[string][]pendingDelete{}
	st.lsn = map[string]uint64{}
	st.dimension = s.cfg.Dimension
}
