//go:build cgo

package zmq

/*
#cgo pkg-config: libzmq
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

static int set_int(void *s, int opt, int v) { return zmq_setsockopt(s, opt, &v, sizeof v); }

// poll3 waits for input on up to three sockets (NULL entries are skipped)
// and reports which are readable in ready[0..2].
static int poll3(void *a, void *b, void *c, long timeout_ms, int *ready) {
	zmq_pollitem_t items[3];
	void *socks[3] = {a, b, c};
	int n = 0, idx[3];
	for (int i = 0; i < 3; i++) {
		ready[i] = 0;
		if (socks[i] == NULL) continue;
		memset(&items[n], 0, sizeof items[n]);
		items[n].socket = socks[i];
		items[n].events = ZMQ_POLLIN;
		idx[n++] = i;
	}
	int rc = zmq_poll(items, n, timeout_ms);
	if (rc < 0) return rc;
	for (int i = 0; i < n; i++)
		if (items[i].revents & ZMQ_POLLIN) ready[idx[i]] = 1;
	return rc;
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Error is a libzmq error: errno of the failing call and its zmq_strerror.
type Error struct {
	Op    string
	Errno int
	Text  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (errno %d)", e.Op, e.Text, e.Errno) }

// zmqError wraps the errno cgo captured in the failing call itself. (A
// separate zmq_errno() call could run on another OS thread: a goroutine is
// only pinned to its thread for the duration of one cgo call.)
func zmqError(op string, err error) error {
	n, ok := err.(syscall.Errno)
	if !ok {
		return fmt.Errorf("%s: failed without an errno (%v)", op, err)
	}
	return &Error{Op: op, Errno: int(n), Text: C.GoString(C.zmq_strerror(C.int(n)))}
}

func isEINTR(err error) bool { return err == syscall.EINTR }

// retried makes a libzmq call until it does not fail with EINTR. libzmq
// processes a socket's pending commands before most calls (setsockopt,
// bind, connect, zmq_socket_monitor's own bind, send, receive) and gives
// up with EINTR, before doing anything, when a signal interrupts that;
// the Go runtime signals threads routinely (SIGURG preemption), so any
// such call can see it: TestCertificates once failed with
// "zmq_socket_monitor: Interrupted system call". call returns libzmq's
// result (negative or, for the setters, non-zero on failure) and errno.
func retried(call func() (C.int, error)) (C.int, error) {
	for {
		rc, errno := call()
		if rc >= 0 || !isEINTR(errno) {
			return rc, errno
		}
	}
}

func isErrno(err error, n C.int) bool {
	var e *Error
	return errors.As(err, &e) && e.Errno == int(n)
}

// Version returns the libzmq version linked in.
func Version() string {
	var major, minor, patch C.int
	C.zmq_version(&major, &minor, &patch)
	return fmt.Sprintf("%d.%d.%d", major, minor, patch)
}

// HasCurve reports whether libzmq was built with CURVE support.
func HasCurve() bool {
	c := C.CString("curve")
	defer C.free(unsafe.Pointer(c))
	return C.zmq_has(c) == 1
}

// Z85Decode decodes s with zmq_z85_decode. libzmq writes len(s)/5*4 bytes
// without a bounds check, so the buffer is sized from s here.
func Z85Decode(s string) ([]byte, error) {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	n := len(s)/5*4 + 4
	buf := C.malloc(C.size_t(n))
	defer C.free(buf)
	if p, errno := C.zmq_z85_decode((*C.uint8_t)(buf), cs); p == nil {
		return nil, zmqError("zmq_z85_decode", errno)
	}
	return C.GoBytes(buf, C.int(len(s)/5*4)), nil
}

// Z85Encode encodes data (a multiple of 4 bytes) with zmq_z85_encode.
func Z85Encode(data []byte) (string, error) {
	if len(data) == 0 || len(data)%4 != 0 {
		return "", fmt.Errorf("zmq_z85_encode: %d bytes is not a positive multiple of 4", len(data))
	}
	src := C.CBytes(data)
	defer C.free(src)
	dst := (*C.char)(C.malloc(C.size_t(len(data)/4*5 + 1)))
	defer C.free(unsafe.Pointer(dst))
	if p, errno := C.zmq_z85_encode(dst, (*C.uint8_t)(src), C.size_t(len(data))); p == nil {
		return "", zmqError("zmq_z85_encode", errno)
	}
	return C.GoString(dst), nil
}

// CurvePublic returns zmq_curve_public(secret), the check libzmq (and so
// Flux) applies to a certificate's keys.
func CurvePublic(secretZ85 string) (string, error) {
	if len(secretZ85) != 40 {
		return "", fmt.Errorf("zmq_curve_public: the secret key must be 40 Z85 characters, got %d", len(secretZ85))
	}
	cs := C.CString(secretZ85)
	defer C.free(unsafe.Pointer(cs))
	var pub [41]C.char
	if rc, errno := C.zmq_curve_public(&pub[0], cs); rc != 0 {
		return "", zmqError("zmq_curve_public", errno)
	}
	return C.GoString(&pub[0]), nil
}

// KeyPair is a CURVE keypair in Z85 text.
type KeyPair struct{ Public, Secret string }

// CurveKeypair returns a fresh keypair from zmq_curve_keypair.
func CurveKeypair() (KeyPair, error) {
	var pub, sec [41]C.char
	if rc, errno := C.zmq_curve_keypair(&pub[0], &sec[0]); rc != 0 {
		return KeyPair{}, zmqError("zmq_curve_keypair", errno)
	}
	return KeyPair{Public: C.GoString(&pub[0]), Secret: C.GoString(&sec[0])}, nil
}

// Context is a libzmq context with a ZAP handler (RFC 27) bound at
// inproc://zeromq.zap.01. Once a handler exists libzmq consults it for every
// CURVE handshake in the context. Servers whose ZAP domain was registered
// with Allow admit only the registered client public key, the way a Flux
// broker admits only the instance owner's key (the certificate every broker
// shares); servers without a domain admit any client.
type Context struct {
	ctx unsafe.Pointer

	mu       sync.Mutex
	allowed  map[string][]byte // ZAP domain -> the only client key admitted
	requests map[string]int    // ZAP requests seen per domain

	zapDone chan error
	seq     atomic.Int64
}

// NewContext creates a context and starts its ZAP handler.
func NewContext() (*Context, error) {
	ctx, errno := C.zmq_ctx_new()
	if ctx == nil {
		return nil, zmqError("zmq_ctx_new", errno)
	}
	c := &Context{ctx: ctx, allowed: map[string][]byte{}, requests: map[string]int{}, zapDone: make(chan error, 1)}
	zap, err := c.socket(C.ZMQ_REP)
	if err == nil {
		err = zap.bind("inproc://zeromq.zap.01")
	}
	if err != nil {
		if zap != nil {
			zap.close()
		}
		C.zmq_ctx_term(ctx)
		return nil, err
	}
	go func() { c.zapDone <- c.serveZAP(zap) }()
	return c, nil
}

// Close stops the ZAP handler and terminates the context. It returns the
// handler's error, if it failed for any other reason than shutdown.
func (c *Context) Close() error {
	C.zmq_ctx_shutdown(c.ctx)
	err := <-c.zapDone
	if rc, errno := C.zmq_ctx_term(c.ctx); rc != 0 {
		return errors.Join(err, zmqError("zmq_ctx_term", errno))
	}
	return err
}

// Allow registers a ZAP domain whose servers admit only clientPublic.
func (c *Context) Allow(domain string, clientPublicZ85 string) error {
	key, err := Z85Decode(clientPublicZ85)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.allowed[domain] = key
	return nil
}

// ZAPRequests returns how many ZAP requests the handler answered for domain.
func (c *Context) ZAPRequests(domain string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests[domain]
}

func (c *Context) serveZAP(zap *socket) error {
	defer zap.close()
	for {
		frames, err := zap.recvMultipart()
		if err != nil {
			if isErrno(err, C.ETERM) {
				return nil
			}
			return fmt.Errorf("ZAP handler: %w", err)
		}
		// version, request id, domain, address, routing id, mechanism, credentials...
		if len(frames) < 6 {
			return fmt.Errorf("ZAP handler: malformed request of %d frames", len(frames))
		}
		domain, mechanism := string(frames[2]), string(frames[5])
		status, text := "200", "OK"
		c.mu.Lock()
		c.requests[domain]++
		allowed, restricted := c.allowed[domain]
		c.mu.Unlock()
		switch {
		case mechanism != "CURVE" || len(frames) != 7 || len(frames[6]) != 32:
			status, text = "400", "not a CURVE request"
		case restricted && string(frames[6]) != string(allowed):
			status, text = "400", "client key is not the instance key"
		case !restricted && domain != "":
			status, text = "400", "unknown ZAP domain"
		}
		reply := [][]byte{[]byte("1.0"), frames[1], []byte(status), []byte(text), []byte("test-user"), nil}
		if err := zap.sendMultipart(reply); err != nil {
			if isErrno(err, C.ETERM) {
				return nil
			}
			return fmt.Errorf("ZAP handler: %w", err)
		}
	}
}

type socket struct{ p unsafe.Pointer }

func (c *Context) socket(typ C.int) (*socket, error) {
	p, errno := C.zmq_socket(c.ctx, typ)
	if p == nil {
		return nil, zmqError("zmq_socket", errno)
	}
	s := &socket{p: p}
	if err := s.setInt(C.ZMQ_LINGER, 0); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *socket) close() { C.zmq_close(s.p) }

func (s *socket) setInt(opt C.int, v int) error {
	if rc, errno := retried(func() (C.int, error) {
		rc, errno := C.set_int(s.p, opt, C.int(v))
		return rc, errno
	}); rc != 0 {
		return zmqError(fmt.Sprintf("zmq_setsockopt(%d)", opt), errno)
	}
	return nil
}

// setString sets a string option including its terminating NUL (the form
// libzmq documents for 40-character Z85 CURVE keys).
func (s *socket) setString(opt C.int, v string, withNUL bool) error {
	cs := C.CString(v)
	defer C.free(unsafe.Pointer(cs))
	n := len(v)
	if withNUL {
		n++
	}
	if rc, errno := retried(func() (C.int, error) {
		rc, errno := C.zmq_setsockopt(s.p, opt, unsafe.Pointer(cs), C.size_t(n))
		return rc, errno
	}); rc != 0 {
		return zmqError(fmt.Sprintf("zmq_setsockopt(%d)", opt), errno)
	}
	return nil
}

func (s *socket) bind(endpoint string) error {
	cs := C.CString(endpoint)
	defer C.free(unsafe.Pointer(cs))
	if rc, errno := retried(func() (C.int, error) {
		rc, errno := C.zmq_bind(s.p, cs)
		return rc, errno
	}); rc != 0 {
		return zmqError("zmq_bind "+endpoint, errno)
	}
	return nil
}

func (s *socket) connect(endpoint string) error {
	cs := C.CString(endpoint)
	defer C.free(unsafe.Pointer(cs))
	if rc, errno := retried(func() (C.int, error) {
		rc, errno := C.zmq_connect(s.p, cs)
		return rc, errno
	}); rc != 0 {
		return zmqError("zmq_connect "+endpoint, errno)
	}
	return nil
}

func (s *socket) lastEndpoint() (string, error) {
	var buf [256]C.char
	n := C.size_t(len(buf))
	if rc, errno := retried(func() (C.int, error) {
		rc, errno := C.zmq_getsockopt(s.p, C.ZMQ_LAST_ENDPOINT, unsafe.Pointer(&buf[0]), &n)
		return rc, errno
	}); rc != 0 {
		return "", zmqError("zmq_getsockopt(ZMQ_LAST_ENDPOINT)", errno)
	}
	return C.GoString(&buf[0]), nil
}

func (s *socket) sendMultipart(frames [][]byte) error {
	for i, f := range frames {
		flags := C.int(0)
		if i < len(frames)-1 {
			flags = C.ZMQ_SNDMORE
		}
		var p unsafe.Pointer
		if len(f) > 0 {
			p = C.CBytes(f)
		}
		rc, errno := retried(func() (C.int, error) {
			rc, errno := C.zmq_send(s.p, p, C.size_t(len(f)), flags)
			return rc, errno
		})
		if p != nil {
			C.free(p)
		}
		if rc < 0 {
			return zmqError("zmq_send", errno)
		}
	}
	return nil
}

// recvMultipart receives one whole message (blocking unless the socket has
// a receive timeout).
//
// Blocking libzmq calls return EINTR when a signal arrives, and the Go
// runtime signals threads routinely (SIGURG preemption): receive retries
// (retried), as every other call does, and poll.
func (s *socket) recvMultipart() ([][]byte, error) {
	const max = 4096
	buf := C.malloc(max)
	defer C.free(buf)
	var frames [][]byte
	for {
		n, errno := retried(func() (C.int, error) {
			rc, errno := C.zmq_recv(s.p, buf, max, 0)
			return rc, errno
		})
		if n < 0 {
			return nil, zmqError("zmq_recv", errno)
		}
		if n > max {
			return nil, fmt.Errorf("zmq_recv: frame of %d bytes is larger than the %d-byte buffer", n, max)
		}
		frames = append(frames, C.GoBytes(buf, C.int(n)))
		var more C.int
		size := C.size_t(unsafe.Sizeof(more))
		if rc, errno := C.zmq_getsockopt(s.p, C.ZMQ_RCVMORE, unsafe.Pointer(&more), &size); rc != 0 {
			return nil, zmqError("zmq_getsockopt(ZMQ_RCVMORE)", errno)
		}
		if more == 0 {
			return frames, nil
		}
	}
}

// Handshake describes one CURVE connection attempt over TCP on 127.0.0.1:
// a ROUTER server (ZMQ_CURVE_SERVER, as a Flux broker binds) and a DEALER
// client (as a Flux child broker connects).
type Handshake struct {
	// Server is the keypair the server socket loads (both keys are set, as
	// czmq's zcert_apply does for a Flux broker; the server uses the secret).
	Server KeyPair
	// ServerKey is the server public key the client is given.
	ServerKey string
	// Client is the client's own keypair.
	Client KeyPair
	// ZAPDomain, if set, is the server's ZAP domain (see Context.Allow).
	ZAPDomain string
	// Timeout bounds the whole attempt.
	Timeout time.Duration
}

// Event names of the server-side socket monitor.
const (
	EventSucceeded      = "HANDSHAKE_SUCCEEDED"
	EventFailedProtocol = "HANDSHAKE_FAILED_PROTOCOL"
	EventFailedAuth     = "HANDSHAKE_FAILED_AUTH"
	EventFailedNoDetail = "HANDSHAKE_FAILED_NO_DETAIL"
)

var eventNames = map[uint16]string{
	C.ZMQ_EVENT_HANDSHAKE_SUCCEEDED:        EventSucceeded,
	C.ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:  EventFailedProtocol,
	C.ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:      EventFailedAuth,
	C.ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: EventFailedNoDetail,
}

// Result is what a Handshake observed.
type Result struct {
	// Exchanged is true when the client's request reached the server and
	// the server's reply reached the client, both intact.
	Exchanged bool
	// Events are the server's handshake monitor events, in order, with
	// their values (a ZMTP protocol error code or a ZAP status code).
	Events []string
	// Elapsed is how long the attempt took.
	Elapsed time.Duration
}

// Succeeded reports a completed exchange after a successful handshake with
// no failure event.
func (r Result) Succeeded() bool {
	return r.Exchanged && r.has(EventSucceeded) && !r.Failed()
}

// Failed reports whether the server saw a failed handshake.
func (r Result) Failed() bool {
	return r.has(EventFailedProtocol) || r.has(EventFailedAuth) || r.has(EventFailedNoDetail)
}

func (r Result) has(name string) bool {
	for _, e := range r.Events {
		if len(e) >= len(name) && e[:len(name)] == name {
			return true
		}
	}
	return false
}

// Run performs the handshake and a request/reply. It returns an error only
// when the harness itself fails (socket setup); a refused or timed-out
// handshake is reported in the Result. It stops at the first failure event
// or once the exchange and the success event were both seen.
func (c *Context) Run(h Handshake) (res Result, err error) {
	start := time.Now()
	defer func() { res.Elapsed = time.Since(start) }()
	n := c.seq.Add(1)

	server, err := c.socket(C.ZMQ_ROUTER)
	if err != nil {
		return res, err
	}
	defer server.close()
	if err := server.setInt(C.ZMQ_CURVE_SERVER, 1); err != nil {
		return res, err
	}
	if err := server.setString(C.ZMQ_CURVE_PUBLICKEY, h.Server.Public, true); err != nil {
		return res, err
	}
	if err := server.setString(C.ZMQ_CURVE_SECRETKEY, h.Server.Secret, true); err != nil {
		return res, err
	}
	if h.ZAPDomain != "" {
		if err := server.setString(C.ZMQ_ZAP_DOMAIN, h.ZAPDomain, false); err != nil {
			return res, err
		}
	}
	monEndpoint := fmt.Sprintf("inproc://handshake-monitor-%d", n)
	cmon := C.CString(monEndpoint)
	defer C.free(unsafe.Pointer(cmon))
	events := C.ZMQ_EVENT_HANDSHAKE_SUCCEEDED | C.ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
		C.ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | C.ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
	if rc, errno := retried(func() (C.int, error) {
		rc, errno := C.zmq_socket_monitor(server.p, cmon, C.int(events))
		return rc, errno
	}); rc != 0 {
		return res, zmqError("zmq_socket_monitor", errno)
	}
	monitor, err := c.socket(C.ZMQ_PAIR)
	if err != nil {
		return res, err
	}
	defer monitor.close()
	if err := monitor.connect(monEndpoint); err != nil {
		return res, err
	}
	if err := server.bind("tcp://127.0.0.1:*"); err != nil {
		return res, err
	}
	endpoint, err := server.lastEndpoint()
	if err != nil {
		return res, err
	}

	client, err := c.socket(C.ZMQ_DEALER)
	if err != nil {
		return res, err
	}
	defer client.close()
	if err := client.setString(C.ZMQ_CURVE_SERVERKEY, h.ServerKey, true); err != nil {
		return res, err
	}
	if err := client.setString(C.ZMQ_CURVE_PUBLICKEY, h.Client.Public, true); err != nil {
		return res, err
	}
	if err := client.setString(C.ZMQ_CURVE_SECRETKEY, h.Client.Secret, true); err != nil {
		return res, err
	}
	// Do not retry forever within one attempt: a refused client reconnects.
	if err := client.setInt(C.ZMQ_SNDTIMEO, int(h.Timeout/time.Millisecond)); err != nil {
		return res, err
	}
	if err := client.connect(endpoint); err != nil {
		return res, err
	}
	request := fmt.Appendf(nil, "ping %d", n)
	reply := fmt.Appendf(nil, "pong %d", n)
	if err := client.sendMultipart([][]byte{request}); err != nil {
		return res, err
	}

	deadline := start.Add(h.Timeout)
	var ready [3]C.int
	for {
		left := time.Until(deadline)
		if left <= 0 || res.Failed() || (res.Exchanged && res.has(EventSucceeded)) {
			return res, nil
		}
		if rc, errno := C.poll3(server.p, client.p, monitor.p, C.long(left/time.Millisecond+1), &ready[0]); rc < 0 {
			if isEINTR(errno) {
				continue
			}
			return res, zmqError("zmq_poll", errno)
		}
		if ready[2] != 0 {
			frames, err := monitor.recvMultipart()
			if err != nil {
				return res, err
			}
			if len(frames) < 1 || len(frames[0]) != 6 {
				return res, fmt.Errorf("monitor: malformed event %q", frames)
			}
			ev := binary.NativeEndian.Uint16(frames[0][:2])
			val := binary.NativeEndian.Uint32(frames[0][2:])
			name, ok := eventNames[ev]
			if !ok {
				name = fmt.Sprintf("EVENT_%#x", ev)
			}
			res.Events = append(res.Events, fmt.Sprintf("%s(%#x)", name, val))
		}
		if ready[0] != 0 {
			frames, err := server.recvMultipart()
			if err != nil {
				return res, err
			}
			if len(frames) == 2 && string(frames[1]) == string(request) {
				if err := server.sendMultipart([][]byte{frames[0], reply}); err != nil {
					return res, err
				}
			} else {
				return res, fmt.Errorf("server: unexpected message %q", frames)
			}
		}
		if ready[1] != 0 {
			frames, err := client.recvMultipart()
			if err != nil {
				return res, err
			}
			if len(frames) != 1 || string(frames[0]) != string(reply) {
				return res, fmt.Errorf("client: unexpected reply %q", frames)
			}
			res.Exchanged = true
		}
	}
}
