package resourcelist

import (
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Source is a ResourceList as the function reads it: a table of the
// items' records, known up front, and each item whole when asked for.
// Whole parses the list at once; Lazy (lazy.go) parses each item when
// it is asked for.
type Source interface {
	// Records is the record of every item, in list order.
	Records() []*Record
	// Item is item i whole. An item asked for again is given again, as
	// the list holds it: whether from memory or parsed again is the
	// source's choice, so the caller states what it needs and when, and
	// holds nothing for later.
	Item(i int) (*fn.KubeObject, error)
	// FunctionConfig is the list's functionConfig.
	FunctionConfig() *fn.KubeObject
	// Results are the results the list holds (an earlier function's).
	Results() fn.Results
	// Finish checks the items never taken: each must read as it does in
	// the whole list (an error wraps ErrUnsafe when it does not).
	Finish() error
}

// Whole is the Source of a list parsed whole (Parse, or built in
// standalone mode).
type Whole struct {
	rl      *fn.ResourceList
	records []*Record
}

// NewWhole is the Source of rl, whose records keep the labels and
// annotations keep allows. An item is given from rl.Items each time it
// is asked for: the tree is in memory anyway, from the parse on.
func NewWhole(rl *fn.ResourceList, keep RecordFilter) *Whole {
	rc := NewRecorder(keep)
	records := make([]*Record, len(rl.Items))
	for i, it := range rl.Items {
		records[i] = rc.Record(it)
	}
	return &Whole{rl: rl, records: records}
}

// Records implements Source.
func (s *Whole) Records() []*Record { return s.records }

// Item implements Source.
func (s *Whole) Item(i int) (*fn.KubeObject, error) {
	if i < 0 || i >= len(s.rl.Items) {
		return nil, fmt.Errorf("the list has no items[%d]", i)
	}
	return s.rl.Items[i], nil
}

// FunctionConfig implements Source.
func (s *Whole) FunctionConfig() *fn.KubeObject { return s.rl.FunctionConfig }

// Results implements Source.
func (s *Whole) Results() fn.Results { return s.rl.Results }

// Finish implements Source: every item of a whole parse reads as in the
// list.
func (s *Whole) Finish() error { return nil }
