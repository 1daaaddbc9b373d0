package agent

import (
	"bytes"
	"io"
	"os"
)

// TailLines returns the complete lines among the last maxBytes of a file,
// oldest first: the tail of a transcript or rollout, without reading it all.
func TailLines(path string, maxBytes int64) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	start := max(0, size-maxBytes)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return nil, err
	}
	if start > 0 {
		// The first line is cut: drop it.
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return nil, nil
		}
		buf = buf[i+1:]
	}
	// An unterminated last line may still be being written: drop it.
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	} else {
		return nil, nil
	}
	return bytes.Split(buf, []byte{'\n'}), nil
}
