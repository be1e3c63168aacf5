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
	// Metas is the record of every item, in list order.
	Metas() []*Meta
	// Item is item i whole.
	Item(i int) (*fn.KubeObject, error)
	// Again says that item i will be asked for more than once: the
	// source gives it each time, from memory or parsed again, as it
	// chooses. The caller states what it needs, and holds nothing.
	Again(i int)
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
	records []*Meta
	again   map[int]bool
}

// NewWhole is the Source of rl, whose records keep the labels and
// annotations keep allows. An item given leaves rl.Items, so that the
// sink can drop it once written, unless it will be asked for again
// (Again).
func NewWhole(rl *fn.ResourceList, keep MetaFilter) *Whole {
	rc := NewMetaReader(keep)
	records := make([]*Meta, len(rl.Items))
	for i, it := range rl.Items {
		records[i] = rc.Read(it)
	}
	return &Whole{rl: rl, records: records, again: map[int]bool{}}
}

// Metas implements Source.
func (s *Whole) Metas() []*Meta { return s.records }

// Item implements Source.
func (s *Whole) Item(i int) (*fn.KubeObject, error) {
	obj := s.rl.Items[i]
	if obj == nil {
		return nil, fmt.Errorf("items[%d] was already taken", i)
	}
	if !s.again[i] {
		s.rl.Items[i] = nil
	}
	return obj, nil
}

// Again implements Source: the item stays in rl.Items.
func (s *Whole) Again(i int) { s.again[i] = true }

// FunctionConfig implements Source.
func (s *Whole) FunctionConfig() *fn.KubeObject { return s.rl.FunctionConfig }

// Results implements Source.
func (s *Whole) Results() fn.Results { return s.rl.Results }

// Finish implements Source: every item of a whole parse reads as in the
// list.
func (s *Whole) Finish() error { return nil }
