// Command keydbrepro reproduces, without weir, the two KeyDB defects that
// make redisstore refuse KeyDB (docs/compatibility.md, KeyDB). It speaks
// RESP over plain TCP connections (no client library, no pool), so that
// every connection it opens and closes is one a reader can follow:
//
//	go run ./redisstore/testdata/keydbrepro [-addr 127.0.0.1:6379] [-for 60s] timeout-table|blpop|unlink
//
// What each mode does:
//
//   - timeout-table: five BLPOP k 5 that an LPUSH serves, then INFO clients.
//     Redis and Valkey report clients_in_timeout_table:0; KeyDB keeps the
//     five served clients there (Snapchat/KeyDB#928). Deterministic; harmless.
//   - blpop: eight loops, each opening a connection, sending BLPOP k 0.900,
//     serving it with an LPUSH from a second connection, and closing both.
//     When a served client's old timeout comes due after the client has gone,
//     KeyDB deadlocks in handleBlockedClientsTimeout or crashes ("Unknown
//     btype … in replyToBlockedClientTimedOut()", #659, or another
//     assertion). The loops stop at -for, or when the server stops answering
//     PING within 5 s. It may take the server down: run it on a server of
//     its own.
//   - unlink: 2,000 filler keys and one loop of full SCAN … COUNT 1000
//     iterations; beside it 2,000 rounds of HSET k f 1; UNLINK k; EXISTS k,
//     then the same with DEL, then a script that UNLINKs k and writes it
//     again. KeyDB runs a SCAN with a large COUNT (and KEYS) on a snapshot,
//     and a key unlinked while one runs is read back (EXISTS 1; the script's
//     key keeps its old fields). Redis and Valkey: 0 of 2,000.
//
// It exits 1 when it saw the defect, 0 when it did not, 2 on a usage or
// connection error. It lives under testdata so that no test and no CI run
// starts it against a server it may crash.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "the server's host:port")
	dur := flag.Duration("for", time.Minute, "how long blpop runs at most")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: keydbrepro [-addr host:port] [-for 60s] timeout-table|blpop|unlink")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	var (
		bad bool
		err error
	)
	switch flag.Arg(0) {
	case "timeout-table":
		bad, err = timeoutTable(*addr)
	case "blpop":
		bad, err = blpopLoops(*addr, *dur)
	case "unlink":
		bad, err = unlinkDuringScan(*addr)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "keydbrepro:", err)
		os.Exit(2)
	}
	if bad {
		os.Exit(1)
	}
}

// conn is one RESP connection.
type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dial(addr string) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReader(c)}, nil
}

func (c *conn) close() { c.c.Close() }

// send writes one command.
func (c *conn) send(args ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := c.c.Write([]byte(b.String()))
	return err
}

// read reads one reply: a string, an int64, nil, a []any, or an error
// reply as a replyError.
func (c *conn) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return replyError(line[1:]), nil
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := readFull(c.r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown reply %q", line)
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

type replyError string

func (e replyError) Error() string { return string(e) }

// do sends one command and reads its reply; an error reply is an error.
func (c *conn) do(args ...string) (any, error) {
	if err := c.send(args...); err != nil {
		return nil, err
	}
	v, err := c.read()
	if e, ok := v.(replyError); ok {
		return nil, fmt.Errorf("%s: %w", args[0], e)
	}
	return v, err
}

// infoField returns field of INFO section, or "".
func infoField(c *conn, section, field string) (string, error) {
	v, err := c.do("INFO", section)
	if err != nil {
		return "", err
	}
	s, _ := v.(string)
	for _, line := range strings.Split(s, "\r\n") {
		if f, val, ok := strings.Cut(line, ":"); ok && f == field {
			return val, nil
		}
	}
	return "", nil
}

// blockedClients waits until INFO clients reports n blocked clients.
func blockedClients(c *conn, n int) error {
	for range 500 {
		v, err := infoField(c, "clients", "blocked_clients")
		if err != nil {
			return err
		}
		if v == strconv.Itoa(n) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("%d clients did not block on BLPOP", n)
}

func timeoutTable(addr string) (bool, error) {
	ctl, err := dial(addr)
	if err != nil {
		return false, err
	}
	defer ctl.close()
	const n = 5
	key := "keydbrepro:tt:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	before, err := infoField(ctl, "clients", "clients_in_timeout_table")
	if err != nil {
		return false, err
	}
	var blocked []*conn
	defer func() {
		for _, c := range blocked {
			c.close()
		}
	}()
	for range n {
		c, err := dial(addr)
		if err != nil {
			return false, err
		}
		blocked = append(blocked, c)
		if err := c.send("BLPOP", key, "5"); err != nil {
			return false, err
		}
	}
	if err := blockedClients(ctl, n); err != nil {
		return false, err
	}
	for range n {
		if _, err := ctl.do("LPUSH", key, "x"); err != nil {
			return false, err
		}
	}
	for _, c := range blocked {
		if _, err := c.read(); err != nil {
			return false, err
		}
	}
	after, err := infoField(ctl, "clients", "clients_in_timeout_table")
	if err != nil {
		return false, err
	}
	fmt.Printf("%d BLPOP %s 5, each served by an LPUSH: clients_in_timeout_table %s before, %s after (want the same)\n", n, key, before, after)
	b, _ := strconv.Atoi(before)
	a, _ := strconv.Atoi(after)
	return a > b, nil
}

func blpopLoops(addr string, d time.Duration) (bool, error) {
	ctl, err := dial(addr)
	if err != nil {
		return false, err
	}
	ctl.close()
	var (
		stop   atomic.Bool
		rounds atomic.Int64
		wg     sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("keydbrepro:bl:%d", w)
			for !stop.Load() {
				if !blpopRound(addr, key) {
					return
				}
				rounds.Add(1)
			}
		}()
	}
	start := time.Now()
	verdict := "answered PING throughout"
	bad := false
	for time.Since(start) < d {
		time.Sleep(500 * time.Millisecond)
		if err := ping(addr); err != nil {
			verdict = "stopped answering PING: " + err.Error()
			bad = true
			break
		}
	}
	stop.Store(true)
	if !bad {
		wg.Wait()
	} // else the loops may be stuck in a read on a hung server: leave them
	fmt.Printf("8 loops of a served BLPOP k 0.900 on a fresh connection, then close: %d rounds in %v; the server %s\n",
		rounds.Load(), time.Since(start).Round(time.Second), verdict)
	return bad, nil
}

// blpopRound opens a connection, blocks it on BLPOP key 0.900, serves it
// from a second connection and closes both. false: the server is gone.
func blpopRound(addr, key string) bool {
	b, err := dial(addr)
	if err != nil {
		return false
	}
	defer b.close()
	b.c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := b.send("BLPOP", key, "0.900"); err != nil {
		return false
	}
	p, err := dial(addr)
	if err != nil {
		return false
	}
	defer p.close()
	p.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := p.do("LPUSH", key, "x"); err != nil {
		return false
	}
	_, err = b.read()
	return err == nil
}

func ping(addr string) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.close()
	c.c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = c.do("PING")
	return err
}

func unlinkDuringScan(addr string) (bool, error) {
	ctl, err := dial(addr)
	if err != nil {
		return false, err
	}
	defer ctl.close()
	tag := "keydbrepro:ul:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	for i := range 2000 {
		if err := ctl.send("SET", tag+":fill:"+strconv.Itoa(i), "1"); err != nil {
			return false, err
		}
	}
	for range 2000 {
		if _, err := ctl.read(); err != nil {
			return false, err
		}
	}
	defer func() {
		// the filler keys, one DEL each through a pipeline
		for i := range 2000 {
			_ = ctl.send("DEL", tag+":fill:"+strconv.Itoa(i))
		}
		for range 2000 {
			_, _ = ctl.read()
		}
		_, _ = ctl.do("DEL", tag+":k")
	}()
	sc, err := dial(addr)
	if err != nil {
		return false, err
	}
	defer sc.close()
	var (
		stop  atomic.Bool
		scans atomic.Int64
		wg    sync.WaitGroup
		serr  error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			cursor := "0"
			for {
				v, err := sc.do("SCAN", cursor, "MATCH", tag+":*", "COUNT", "1000")
				if err != nil {
					serr = err
					return
				}
				a, _ := v.([]any)
				if len(a) != 2 {
					serr = fmt.Errorf("SCAN reply %v", v)
					return
				}
				cursor, _ = a[0].(string)
				if cursor == "0" {
					break
				}
			}
			scans.Add(1)
		}
	}()
	k := tag + ":k"
	round := func(del string) (int, error) {
		stale := 0
		for range 2000 {
			if _, err := ctl.do("HSET", k, "f", "1"); err != nil {
				return 0, err
			}
			if _, err := ctl.do(del, k); err != nil {
				return 0, err
			}
			v, err := ctl.do("EXISTS", k)
			if err != nil {
				return 0, err
			}
			if v != int64(0) {
				stale++
			}
		}
		return stale, nil
	}
	script := func() (int, error) {
		stale := 0
		for range 2000 {
			if _, err := ctl.do("HSET", k, "old", "1"); err != nil {
				return 0, err
			}
			if _, err := ctl.do("EVAL", "redis.call('UNLINK', KEYS[1]) redis.call('HSET', KEYS[1], 'new', '1') return 1", "1", k); err != nil {
				return 0, err
			}
			v, err := ctl.do("HEXISTS", k, "old")
			if err != nil {
				return 0, err
			}
			if v != int64(0) {
				stale++
			}
			if _, err := ctl.do("DEL", k); err != nil {
				return 0, err
			}
		}
		return stale, nil
	}
	unlinked, err1 := round("UNLINK")
	deleted, err2 := round("DEL")
	merged, err3 := script()
	stop.Store(true)
	wg.Wait()
	if err := errors.Join(err1, err2, err3, serr); err != nil {
		return false, err
	}
	fmt.Printf("beside %d full SCAN … COUNT 1000 iterations: HSET k; UNLINK k; EXISTS k read k back %d of 2000 times; with DEL %d of 2000; "+
		"a script's UNLINK k then HSET k new left k's old field %d of 2000 times (want 0, 0, 0)\n", scans.Load(), unlinked, deleted, merged)
	return unlinked+deleted+merged > 0, nil
}
