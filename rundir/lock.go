package rundir

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockFile is the name of the lock file inside a run directory.
const LockFile = "lock"

// ErrLocked is wrapped by the error of Acquire when another process (or
// another Lock of this process) holds the directory's lock.
var ErrLocked = errors.New("run directory in use")

// ErrNoLocks is wrapped by the error of Acquire when the directory's file
// system does not support flock(2) (a Lustre mount without the flock
// option, say).
var ErrNoLocks = errors.New("the file system does not support file locks")

// Holder is what a lock's holder records of itself in the lock file.
type Holder struct {
	PID   int       // process id (0: not recorded)
	Host  string    // host name
	Start time.Time // when it took the lock
}

// String returns "pid PID on host HOST since START", or a note that the
// holder has not recorded itself yet.
func (h Holder) String() string {
	if h.PID == 0 {
		return "a process that has not recorded its pid yet"
	}
	s := fmt.Sprintf("pid %d on host %s", h.PID, h.Host)
	if !h.Start.IsZero() {
		s += " since " + h.Start.UTC().Format(time.RFC3339)
	}
	return s
}

// LockedError is the error of Acquire for a directory whose lock is held.
type LockedError struct {
	Dir    string
	Holder Holder // as recorded in the lock file (zero when not yet written)
}

// Error names the directory and the holder.
func (e *LockedError) Error() string {
	return fmt.Sprintf("%v: %s is being written by %s (one writer per run directory: wait for it to end, or stop it; readers such as eval need no lock)%s",
		ErrLocked, e.Dir, e.Holder, staleHint(e.Dir))
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Lock is a held exclusive lock on a run directory.
type Lock struct {
	dir    string
	f      *os.File
	holder Holder
}

// Acquire takes the exclusive lock of the run directory dir, which must
// exist, without waiting: when another holds it, the error is a
// *LockedError naming the holder. The lock file records this process's
// pid, host name and the time.
func Acquire(dir string) (*Lock, error) {
	f, err := acquire(dir)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), Host: host, Start: time.Now().Truncate(time.Second)}
	if err := writeHolder(f, h); err != nil {
		release(f, dir)
		return nil, fmt.Errorf("lock run directory %s: record the holder: %w", dir, err)
	}
	return &Lock{dir: dir, f: f, holder: h}, nil
}

// Dir returns the directory the lock holds.
func (l *Lock) Dir() string { return l.dir }

// Holder returns what the lock recorded of its holder (this process).
func (l *Lock) Holder() Holder { return l.holder }

// Release gives the lock back. Releasing a nil or released Lock does
// nothing.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	f.Truncate(0) // no holder recorded: informational only, the lock is the flock
	return release(f, l.dir)
}

// ReadHolder returns the holder recorded in dir's lock file: the current
// holder while the lock is held, the last one (or none) otherwise. The
// record is informational; only Acquire tells whether the lock is held.
func ReadHolder(dir string) (Holder, error) {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return Holder{}, fmt.Errorf("lock of %s: %w", dir, err)
	}
	defer f.Close()
	return readHolder(f)
}

// writeHolder replaces the text of the lock file f with h.
func writeHolder(f *os.File, h Holder) error {
	text := fmt.Sprintf("pid %d\nhost %s\nstart %s\n", h.PID, h.Host, h.Start.UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(text), 0)
	return err
}

// readHolder parses the text of a lock file (lines "key value"; unknown
// keys and bad values are skipped: the text is informational).
func readHolder(f *os.File) (Holder, error) {
	var h Holder
	sc := bufio.NewScanner(io.NewSectionReader(f, 0, 1<<16))
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		switch k {
		case "pid":
			h.PID, _ = strconv.Atoi(v)
		case "host":
			h.Host = v
		case "start":
			h.Start, _ = time.Parse(time.RFC3339, v)
		}
	}
	return h, sc.Err()
}
