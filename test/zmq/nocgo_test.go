//go:build !cgo

package zmq

import (
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// TestLibzmq stands in for the real tests when cgo is off: they need
// libzmq through cgo, so under CI they must fail rather than vanish.
func TestLibzmq(t *testing.T) {
	const msg = "cgo is disabled, so libzmq cannot be tested: run with CGO_ENABLED=1 and libzmq3-dev installed (make test-zmq)"
	testsupport.SkipOrFail(t, "%s", msg)
}
