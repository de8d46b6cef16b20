package service

import (
	"reflect"
	"testing"
)

func TestLatestProgressKeepsTheLastReportOfEachOp(t *testing.T) {
	in := []Progress{
		{Op: "a", Done: 1, Total: 3}, {Op: "b", Done: 1, Total: 9},
		{Op: "a", Done: 2, Total: 3}, {Op: "a", Done: 3, Total: 3},
	}
	got := LatestProgress(in)
	want := []Progress{{Op: "b", Done: 1, Total: 9}, {Op: "a", Done: 3, Total: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LatestProgress = %+v, want %+v", got, want)
	}
	if in[0].Done != 1 || in[3].Done != 3 {
		t.Fatalf("LatestProgress changed its input: %+v", in)
	}
}

func TestHubReporter(t *testing.T) {
	var h ProgressHub
	var seen []Progress
	cancel := h.Subscribe(func(p Progress) { seen = append(seen, p) })
	Reporter(&h, "op1")("import", 5, 10, "entries")
	Reporter(&h, "")("import", 6, 10, "entries") // no op: not published
	cancel()
	Reporter(&h, "op1")("import", 7, 10, "entries") // unsubscribed
	want := []Progress{{Op: "op1", Phase: "import", Done: 5, Total: 10, Unit: "entries"}}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("seen %+v, want %+v", seen, want)
	}
}
