package rundir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSecondWriterRefused takes a directory's lock twice: the second is
// refused with an error naming this process's pid and host, and after the
// release the lock is free again.
func TestSecondWriterRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	_, err = Acquire(dir)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second Acquire: %v, want a *LockedError wrapping ErrLocked", err)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", os.Getpid()), "host " + host, dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if le.Holder.PID != os.Getpid() || le.Holder.Host != host || le.Holder.Start.IsZero() {
		t.Errorf("holder %+v, want pid %d host %s and a start time", le.Holder, os.Getpid(), host)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil { // twice: nothing
		t.Fatal(err)
	}
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

// TestLockPerDirectory takes the locks of K chain directories of one run
// at once, from K goroutines: each directory has its own lock, and each
// records its holder.
func TestLockPerDirectory(t *testing.T) {
	const k = 6
	top := t.TempDir()
	locks := make([]*Lock, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		d := filepath.Join(top, fmt.Sprintf("chain-%d", i+1))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			locks[i], errs[i] = Acquire(d)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("chain %d: %v", i+1, err)
		}
		h, err := ReadHolder(locks[i].Dir())
		if err != nil || h.PID != os.Getpid() {
			t.Errorf("chain %d: holder %+v, %v", i+1, h, err)
		}
	}
	for _, l := range locks {
		l.Release()
	}
}

// TestHelperLockHolder is the child process of TestKilledHolder: it takes
// the lock of $RUNDIR_TEST_LOCK, says "locked" and waits to be killed.
func TestHelperLockHolder(t *testing.T) {
	dir := os.Getenv("RUNDIR_TEST_LOCK")
	if dir == "" {
		t.Skip("run as a child process by TestKilledHolder")
	}
	if _, err := Acquire(dir); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(2)
}

// TestKilledHolder holds a directory's lock in a child process: while it
// lives the lock is refused naming the child's pid; once it is killed by
// SIGKILL (no clean-up runs) the lock is taken over.
func TestKilledHolder(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLockHolder$")
	cmd.Env = append(os.Environ(), "RUNDIR_TEST_LOCK="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	_, err = Acquire(dir)
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.PID != cmd.Process.Pid {
		t.Fatalf("while the child holds the lock: %v, want it refused naming pid %d", err, cmd.Process.Pid)
	}
	if !strings.Contains(err.Error(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("error %q does not name the child's pid", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	h, _ := ReadHolder(dir)
	if h.PID != cmd.Process.Pid {
		t.Errorf("the killed holder's record: %+v, want its pid %d left behind", h, cmd.Process.Pid)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after SIGKILL of the holder: %v", err)
	}
	defer l.Release()
	if h, _ := ReadHolder(dir); h.PID != os.Getpid() {
		t.Errorf("after the take-over the record names pid %d, want %d", h.PID, os.Getpid())
	}
}
