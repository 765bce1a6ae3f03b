package wire

import (
	"encoding/json"
	"slices"
)

// CommittedOffset is one entry of COMMIT's input (sdk/ABI.md §4): a source partition and the offset
// the host has just stored for it, both JSON objects as the source records carried them.
type CommittedOffset struct {
	Partition json.RawMessage `json:"partition"`
	Offset    json.RawMessage `json:"offset"`
}

// AppendCommitted appends COMMIT's input for the stored offsets (partition JSON -> offset JSON):
// a JSON array sorted by partition, or nothing when none were stored, so that a guest sees an
// empty input as it did before the input was added.
func AppendCommitted(b []byte, offsets map[string][]byte) []byte {
	if len(offsets) == 0 {
		return b
	}
	parts := make([]string, 0, len(offsets))
	for p := range offsets {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"partition":`...)
		b = append(b, p...)
		b = append(b, `,"offset":`...)
		b = append(b, offsets[p]...)
		b = append(b, '}')
	}
	return append(b, ']')
}

// DecodeCommitted decodes COMMIT's input; an empty input is no offsets.
func DecodeCommitted(in []byte) ([]CommittedOffset, error) {
	if len(in) == 0 {
		return nil, nil
	}
	var out []CommittedOffset
	err := json.Unmarshal(in, &out)
	return out, err
}
