// Package proctest lets tests see whether a process still runs: one a
// command under test started, which should end with its worker. It reads
// /proc, so it works on Linux only (its functions are in proc_linux.go);
// elsewhere the package is empty.
package proctest
