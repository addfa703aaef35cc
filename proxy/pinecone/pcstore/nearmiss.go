package pcstore

import "context"

// NearMisses counts the records whose metadata names one of variants (the
// subject in other spellings: case, surrounding white space, Unicode
// normalisation form) in the layer's namespaces. Pinecone's metadata
// filters compare exact values and cannot normalise what the index holds,
// so only the spellings the engine derives from the subject are looked
// for: a record spelled in a way none of them is (mixed case that is
// neither the subject's, nor all lower or all upper case) is not counted.
// Each record counts once, whichever variants name it.
func (l *layer) NearMisses(ctx context.Context, _ string, variants []string) (int64, error) {
	if len(variants) == 0 {
		return 0, nil
	}
	namespaces, err := l.namespaces(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, ns := range namespaces {
		found := map[string]bool{}
		for _, v := range variants {
			ids, err := l.ix.search(ctx, ns, l.fields, v, nil)
			if err != nil {
				return 0, err
			}
			for _, id := range ids {
				found[id] = true
			}
		}
		n += int64(len(found))
	}
	return n, nil
}
