// Command tripbooking runs a trip booking as a saga: book a flight, then a
// hotel, then a car, then charge the card. The charge is declined, so the
// workflow compensates: each completed booking's undo job cancels it, in
// reverse order (car, hotel, flight), reading the booking it undoes.
//
//	go run ./examples/tripbooking                      # in-process store
//	go run ./examples/tripbooking -redis redis://localhost:6379/0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// Reservation asks a provider for something.
type Reservation struct {
	Provider string `json:"provider"`
	What     string `json:"what"`
}

// Booking is a provider's confirmation.
type Booking struct {
	Provider string `json:"provider"`
	Ref      string `json:"ref"`
}

// Charge asks the payment provider for money.
type Charge struct {
	Card   string `json:"card"`
	Amount int    `json:"amount"`
}

var (
	Book   = client.NewQueue[Reservation, Booking]("trip.book")
	Cancel = client.NewQueue[string, string]("trip.cancel")
	Pay    = client.NewQueue[Charge, string]("trip.pay")
)

// ErrDeclined is the payment provider's refusal.
var ErrDeclined = errors.New("card declined")

func main() {
	url := flag.String("redis", "", "Redis URL (redis://host:port/db); empty runs on the in-process store")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	store, err := openStore(*url)
	if err == nil {
		err = run(ctx, store, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tripbooking:", err)
		os.Exit(1)
	}
}

func openStore(url string) (client.Store, error) {
	if url == "" {
		return memstore.New(), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return redisstore.New(redis.NewClient(opt), redisstore.Options{})
}

// journal records what the providers did, in order.
type journal struct {
	mu    sync.Mutex
	lines []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, fmt.Sprintf(format, args...))
}

func register(w *worker.Worker, log *journal) {
	worker.Handle(w, Book, func(ctx context.Context, j *worker.Job[Reservation]) (Booking, error) {
		b := Booking{Provider: j.Payload.Provider, Ref: fmt.Sprintf("%s-%d", j.Payload.Provider, len(j.Payload.What)*7)}
		log.add("booked %s: %s (%s)", j.Task, j.Payload.What, b.Ref)
		return b, nil
	})
	worker.Handle(w, Pay, func(ctx context.Context, j *worker.Job[Charge]) (string, error) {
		log.add("charge %d to %s: declined", j.Payload.Amount, j.Payload.Card)
		return "", worker.NonRetryable(ErrDeclined) // retrying will not help
	})
	// An undo job's only dependency is the task it undoes, with its result.
	worker.Handle(w, Cancel, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		b, err := worker.DepResult[Booking](j, j.Task)
		if err != nil {
			return "", err
		}
		log.add("cancelled %s: %s (%s)", j.Task, b.Ref, j.Payload)
		return "cancelled " + b.Ref, nil
	})
}

// run books the trip on one worker and prints what happened.
func run(ctx context.Context, store client.Store, out io.Writer) error {
	log := &journal{}
	w := worker.New(store, worker.Config{Concurrency: 8})
	register(w, log)
	if err := w.Start(ctx); err != nil {
		return err
	}
	defer w.Stop(context.WithoutCancel(ctx))

	wf := client.NewWorkflow()
	flight := client.AddTask(wf, "flight", Book, Reservation{"airline", "LIS→NRT"})
	client.Undo(flight, Cancel, "refund to card")
	hotel := client.AddTask(wf, "hotel", Book, Reservation{"hotel", "3 nights, Shinjuku"}).After(flight)
	client.Undo(hotel, Cancel, "free cancellation")
	car := client.AddTask(wf, "car", Book, Reservation{"rental", "compact"}).After(hotel)
	client.Undo(car, Cancel, "no fee")
	client.AddTask(wf, "pay", Pay, Charge{Card: "4242", Amount: 2150}).After(car)

	c := client.New(store)
	if err := c.Submit(ctx, wf); err != nil {
		return err
	}
	s, err := wf.Wait(ctx)
	var we *weir.WorkflowError
	if !errors.As(err, &we) {
		return fmt.Errorf("want the trip to fail and compensate, got %v", err)
	}
	log.mu.Lock()
	for _, l := range log.lines {
		fmt.Fprintln(out, l)
	}
	log.mu.Unlock()
	fmt.Fprintf(out, "workflow %s (failed: %v): task %s: %s\n", s.State, errors.Is(err, weir.ErrFailed), we.Task, we.Message)
	for _, t := range s.Tasks {
		undo := "-"
		if t.Undo != nil {
			undo = string(t.Undo.State)
		}
		fmt.Fprintf(out, "  %-6s %-9s undo %s\n", t.Name, t.State, undo)
	}
	return nil
}
