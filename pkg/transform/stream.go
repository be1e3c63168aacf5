package transform

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// ParseStream reads a ResourceList for ProcessStream: each item stays a
// stub (what stubKeeps keeps of its metadata) until the function needs
// it whole. An error wraps resourcelist.ErrUnsafe: the list must then be
// read with resourcelist.Parse and rendered with ProcessCompact.
func ParseStream(in []byte) (*fn.ResourceList, *resourcelist.Lazy, error) {
	return resourcelist.ParseLazy(in, stubKeeps)
}

// ProcessStream is ProcessCompact for a list read by ParseStream: each
// item is parsed whole when the loop gets to it (or before it, for the
// items other items read whole: the input's Secrets and the orphan
// candidates), so that memory follows the items in use and the output
// text, not the tree of the whole list (docs/contributing/performance.md, "Memory").
// The bytes written are those of ProcessCompact on the whole parse. An
// error that wraps resourcelist.ErrUnsafe means an item does not read
// alone as it does in the list: nothing is lost, the caller renders the
// whole parse instead.
//
// sp is ProcessCompact's: the spool the output text goes to, or nil.
func (p *Processor) ProcessStream(rl *fn.ResourceList, lazy *resourcelist.Lazy, sp *resourcelist.Spool) (bool, *resourcelist.Compactor, error) {
	c := resourcelist.NewSpooledCompactor(stubKeeps, sp)
	ok, err := p.process(rl, c, lazy)
	if err == nil {
		err = loadRest(rl.Items, lazy)
	}
	if err != nil {
		c.Release()
		return false, nil, err
	}
	return ok, c, nil
}

// loadRest loads the items the loop did not get to (it stops before the
// items on an error in the functionConfig, which leaves them as they
// are) and checks those it replaced without loading: every item must
// read alone as in the list, as if the list had been parsed whole.
func loadRest(items fn.KubeObjects, lazy *resourcelist.Lazy) error {
	for i := range items {
		if _, err := loadAt(items, i, lazy); err != nil {
			return err
		}
	}
	if err := lazy.Verify(); err != nil {
		return fmt.Errorf("checking the items replaced in the list: %w", err)
	}
	return nil
}

// loadAt replaces items[i] by the whole item when it is a stub of lazy
// (nil: items are whole) and returns it.
func loadAt(items fn.KubeObjects, i int, lazy *resourcelist.Lazy) (*fn.KubeObject, error) {
	if lazy == nil {
		return items[i], nil
	}
	obj, ok, err := lazy.Load(items[i])
	if err != nil {
		return nil, err
	}
	if ok {
		items[i] = obj
	}
	return items[i], nil
}

// loadEarly loads the items that are read whole before the loop gets to
// them: the input's v1 Secrets (a JobSet may use one as its CURVE Secret
// and read its certificate) and the orphan candidates (newCompacting and
// pruneOrphans check their digests). Which items are candidates depends
// only on the metadata of the input's JobSets, which the stubs hold; it
// is read through compacting.meta, as a shell's getters panic.
func loadEarly(items fn.KubeObjects, lazy *resourcelist.Lazy) error {
	if lazy == nil {
		return nil
	}
	cp := &compacting{lazy: lazy, owners: map[string]bool{}}
	for _, item := range items {
		if m := cp.meta(item); isOwner(m) {
			cp.owners[m.GetNamespace()+"/"+m.GetName()] = true
		}
	}
	for i, item := range items {
		if m := cp.meta(item); m.GetKind() == "Secret" && m.GetAPIVersion() == "v1" || cp.candidate(item) {
			if _, err := loadAt(items, i, lazy); err != nil {
				return err
			}
		}
	}
	return nil
}
