package rundir

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenMetricsAt reopens metrics files at the length a checkpoint
// recorded: lines after it are dropped, and a file shorter than it (or
// missing, when the checkpoint counts bytes) is refused with an error
// naming the file and both lengths, the file left as it was (extending it
// would pad it with NUL bytes that no reader parses).
func TestOpenMetricsAt(t *testing.T) {
	lines := []byte("{\"step\":10}\n{\"step\":20}\n{\"step\":30}\n")
	for _, tc := range []struct {
		name    string
		content []byte // nil: no file
		at      int64
		want    string // "" when it opens
	}{
		{"at the end", lines, int64(len(lines)), ""},
		{"drops lines after the checkpoint", lines, 12, ""},
		{"empty at 0", []byte{}, 0, ""},
		{"missing at 0", nil, 0, ""},
		{"shorter than the checkpoint", lines[:20], 24, "holds 20 bytes, the checkpoint counts 24"},
		{"empty, checkpoint counts bytes", []byte{}, 12, "holds 0 bytes, the checkpoint counts 12"},
		{"missing, checkpoint counts bytes", nil, 12, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), MetricsFile)
			if tc.content != nil {
				if err := os.WriteFile(path, tc.content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := OpenMetricsAt(path, tc.at)
			if tc.want != "" {
				if err == nil {
					f.Close()
					t.Fatal("opened")
				}
				if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and %q", err, path, tc.want)
				}
				after, e := os.ReadFile(path)
				if tc.content == nil && !errors.Is(e, fs.ErrNotExist) || tc.content != nil && !bytes.Equal(after, tc.content) {
					t.Fatalf("the refused file was changed: %q, %v", after, e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte("{\"step\":40}\n")); err != nil {
				t.Fatal(err)
			}
			f.Close()
			got, _ := os.ReadFile(path)
			if want := string(tc.content[:tc.at]) + "{\"step\":40}\n"; string(got) != want {
				t.Fatalf("file %q, want %q", got, want)
			}
		})
	}
}

// TestReadMetricsErrors reads metrics files that are not metrics: each
// error names the file and the line.
func TestReadMetricsErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		want    string
	}{
		{"not JSON", "{\"step\":10}\n{\"step\":\n", ":2: unexpected end of JSON input"},
		{"NUL padding", "{\"step\":10}\n\x00\x00\x00\n", ":2: invalid character"},
		{"a line longer than any metrics line", "{\"step\":10}\n" + strings.Repeat("x", 2<<20) + "\n", ":2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, MetricsFile)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, n := range []int64{-1, int64(len(tc.content))} {
				_, err := ReadMetricsUpTo(dir, n)
				if err == nil || !strings.Contains(err.Error(), path+tc.want) {
					t.Errorf("read up to %d: %v, want an error with %q", n, err, path+tc.want)
				}
			}
		})
	}
}
