package agentpane

import (
	"github.com/coder/quartz"

	"errors"
	"testing"
	"time"

	"akk/terminaldrivers/discovery"
)

func TestFlights(t *testing.T) {
	d, err := discovery.New(discovery.Config{OnlyExtraSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	clock := quartz.NewMock(t)
	clock.Set(time.Unix(1000, 0))
	x := New(d, Config{Clock: clock})
	k := flightKey{holder: 7, holderStart: 70, request: "same"}
	if err := x.takeFlight(k, "term_a"); err != nil {
		t.Fatal(err)
	}
	if err := x.takeFlight(k, "term_a"); err != nil {
		t.Errorf("the same terminal again: %v", err)
	}
	if err := x.takeFlight(k, "term_b"); !errors.Is(err, ErrSameRequestInFlight) {
		t.Errorf("another terminal: %v", err)
	}
	other := k
	other.request = "different"
	if err := x.takeFlight(other, "term_b"); err != nil {
		t.Errorf("another request: %v", err)
	}
	restarted := k
	restarted.holderStart = 71
	if err := x.takeFlight(restarted, "term_b"); err != nil {
		t.Errorf("another daemon incarnation: %v", err)
	}
	clock.Advance(flightTTL + time.Second)
	if err := x.takeFlight(k, "term_b"); err != nil {
		t.Errorf("after the flight time: %v", err)
	}
	x.landFlight(k)
	if err := x.takeFlight(k, "term_a"); err != nil {
		t.Errorf("after landing: %v", err)
	}
}
