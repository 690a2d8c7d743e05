//go:build unix

package faults

import (
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
)

// ProxyOptions sets how often a Proxy breaks connections.
type ProxyOptions struct {
	// DropReply is the probability, per chunk of reply bytes read from
	// Redis, that the proxy drops that chunk instead of forwarding it and
	// resets both sides of the connection: the server ran the command, the
	// client never learns its reply.
	DropReply float64
	// ResetBefore is the probability, per chunk of command bytes read from
	// the client, that the proxy resets the connection without forwarding
	// it: the command never reaches the server.
	ResetBefore float64
	// Seed seeds the proxy's random choices (0: a random seed).
	Seed uint64
}

// ProxyStats counts what a Proxy did.
type ProxyStats struct {
	Conns          int64 // client connections accepted
	RepliesDropped int64 // replies dropped after the server ran the command
	ResetsBefore   int64 // connections reset before a command was forwarded
	Forwarded      int64 // reply chunks forwarded
}

// Proxy is a TCP proxy on a loopback port in front of a Redis server that
// drops replies and resets connections at random (see ProxyOptions). Stop
// it with Close.
type Proxy struct {
	ln     net.Listener
	target string
	opts   ProxyOptions

	enabled atomic.Bool
	stats   struct{ conns, dropped, resets, fwd atomic.Int64 }

	mu     sync.Mutex
	rnd    *rand.Rand
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartProxy listens on a free loopback port and forwards every
// connection to target, breaking connections as opts says. Faults are on
// from the start; SetFaults turns them off and on.
func StartProxy(target string, opts ProxyOptions) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	p := &Proxy{ln: ln, target: target, opts: opts, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), conns: map[net.Conn]struct{}{}}
	p.enabled.Store(true)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetFaults turns the random drops and resets on or off.
func (p *Proxy) SetFaults(on bool) { p.enabled.Store(on) }

// Stats returns the counts so far.
func (p *Proxy) Stats() ProxyStats {
	return ProxyStats{Conns: p.stats.conns.Load(), RepliesDropped: p.stats.dropped.Load(),
		ResetsBefore: p.stats.resets.Load(), Forwarded: p.stats.fwd.Load()}
}

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) roll(prob float64) bool {
	if prob <= 0 || !p.enabled.Load() {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rnd.Float64() < prob
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.stats.conns.Add(1)
		p.wg.Add(1)
		go p.serve(c)
	}
}

// reset closes c so that the peer sees a reset (RST), not a clean EOF.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		reset(client)
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	var once sync.Once
	kill := func() { once.Do(func() { reset(client); reset(server) }) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.pipe(client, server, p.opts.ResetBefore, &p.stats.resets, nil, kill)
	}()
	p.pipe(server, client, p.opts.DropReply, &p.stats.dropped, &p.stats.fwd, kill)
	kill()
	<-done
}

// pipe copies from src to dst chunk by chunk; before forwarding a chunk it
// rolls prob, and on a hit counts it and kills the connection instead.
func (p *Proxy) pipe(src, dst net.Conn, prob float64, hits, fwd *atomic.Int64, kill func()) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.roll(prob) {
				hits.Add(1)
				kill()
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				kill()
				return
			}
			if fwd != nil {
				fwd.Add(1)
			}
		}
		if err != nil {
			// EOF or a broken side: end both directions.
			kill()
			return
		}
	}
}
