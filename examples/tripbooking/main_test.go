package main

import (
	"testing"
	"time"

	"github.com/weirflow/weir/examples/internal/exampletest"
)

func TestTripBookingCompensatesInReverseOrder(t *testing.T) {
	const want = `booked flight: LIS→NRT (airline-63)
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
	exampletest.CheckOutput(t, time.Minute, want, run)
}
