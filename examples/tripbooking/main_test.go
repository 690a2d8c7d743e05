package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/examples/internal/exampletest"
)

func TestTripBookingCompensatesInReverseOrder(t *testing.T) {
	exampletest.OnEachStore(t, func(t *testing.T, store exampletest.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out strings.Builder
		if err := run(ctx, store, &out); err != nil {
			t.Fatal(err)
		}
		want := `booked flight: LIS→NRT (airline-63)
booked hotel: 3 nights, Shinjuku (hotel-126)
booked car: compact (rental-49)
charge 2150 to 4242: declined
cancelled car: rental-49 (no fee)
cancelled hotel: hotel-126 (free cancellation)
cancelled flight: airline-63 (refund to card)
workflow compensated (failed: true): task pay: card declined
  flight completed undo completed
  hotel  completed undo completed
  car    completed undo completed
  pay    failed    undo -
`
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
	})
}
