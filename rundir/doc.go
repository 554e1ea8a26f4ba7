// Package rundir owns a run directory: the files a run writes there, their
// atomic writes, and the exclusive lock that makes one process at a time
// their writer.
//
// # The files
//
// A run directory holds ConfigFile (config.json: the run's runspec.Config,
// WriteConfig, ReadRunConfig), SamplesFile (rung 1's kept weights: a
// header, SampleHeader, then fixed-size records; CreateSamples,
// OpenSamplesAt and SampleWriter append, ReadSamples and ScanSamples read,
// refusing or skipping a torn or corrupt record), MetricsFile
// (metrics.jsonl, one MetricsLine per logged step; ReadMetrics), the
// checkpoint (CheckpointFile: magic, version, a gob payload and its
// SHA-256; WriteCheckpoint writes it atomically and keeps the previous one
// as checkpoint.prev, ReadCheckpoint verifies it) and TimingFile
// (timing.json, the wall-clock of training; RecordTiming, ReadTiming).
// docs/run-directory.md describes each format. The formats are those of
// earlier versions: existing run directories resume and evaluate.
//
// A run of K chains keeps chain i in ChainDir(dir, K, i). RunStatus reads
// each chain's state from its files (ChainStatus: the figures of its last
// checkpoint, which vouches for the samples and metrics before it);
// PoolDirs and RunDirs expand a run into the chains that have samples.
// CheckRunData and CheckFingerprint refuse data other than the data a run
// was trained on (ErrOtherData).
//
// # The lock
//
// Every writer of a run directory (a new run, a resumed one, an
// --overwrite, one chain task of a job array) holds the directory's Lock
// for as long as it writes: Acquire takes it, Lock.Release gives it back.
// A second writer is refused with a *LockedError (wrapping ErrLocked) that
// names the holder's pid, host and start time. Readers (eval, export,
// predict) take no lock: they read files that are only ever replaced
// atomically or appended to.
//
// The lock is an advisory flock(2) on the file LockFile inside the
// directory. The kernel releases it when its holder exits, however it
// exits (SIGKILL and an out-of-memory kill included), so a lock left by a
// dead process is taken over by the next writer without any clean-up; the
// text in the file (pid, host, start) is informational, rewritten by each
// holder. The file itself is never removed. Each directory has its own
// lock: the K chain directories of one run are written by K processes at
// once.
//
// On network file systems flock needs support from the mount (NFSv4 and
// NFSv3 with lockd, Lustre mounted with -o flock, BeeGFS with global file
// locks): see docs/cluster.md. Where the file system refuses locks,
// Acquire fails with an error wrapping ErrNoLocks that says so.
package rundir
