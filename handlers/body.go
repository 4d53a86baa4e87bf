package handlers

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/clock"
)

// CodeUnsupportedEncoding is the error code of a body in a Content-Encoding the server does
// not read.
const CodeUnsupportedEncoding = "unsupported_content_encoding"

// acceptedEncodings are the content codings a request body may carry, as a 415 names them in
// Accept-Encoding (RFC 7694).
const acceptedEncodings = "gzip, deflate"

// maxCodings bounds how many codings a body may be wrapped in: one is what clients send; a
// stack deeper than this is a bomb's shape, not a client's.
const maxCodings = 2

// unpackBody undoes a request body's Content-Encoding before anything reads the body, so that
// the body limit bounds what the body unpacks to, and so that the budgets and every limit
// after it count the unpacked bytes. fiber's own Ctx.Body decodes without any bound (a
// 600-byte gzip of gzip unpacks to hundreds of megabytes); after this runs the request
// carries no Content-Encoding, so nothing decodes it again. A body that unpacks past
// Limits.MaxBodyBytes is refused with 413 as soon as the limit is crossed, a coding other than
// gzip, deflate (zlib) or identity with 415, a body that does not decode with 400.
func (s *server) unpackBody(c *fiber.Ctx) error {
	if len(c.Request().Body()) > s.opts.Limits.MaxBodyBytes {
		// The listener refuses such a body before any handler; a call made in the process
		// (gRPC's, through InProcess) meets the limit here.
		return s.bodyTooLarge()
	}
	h := &c.Request().Header
	var codings []string
	present, unsupported := false, false
	h.VisitAll(func(k, v []byte) {
		if !strings.EqualFold(string(k), fiber.HeaderContentEncoding) {
			return
		}
		present = true
		for _, coding := range strings.Split(string(v), ",") {
			switch coding = strings.ToLower(strings.TrimSpace(coding)); coding {
			case "", "identity":
			case "gzip", "x-gzip", "deflate":
				codings = append(codings, coding)
			default:
				unsupported = true
			}
		}
	})
	if unsupported || len(codings) > maxCodings {
		return &apiError{Status: fiber.StatusUnsupportedMediaType, Code: CodeUnsupportedEncoding, Outcome: OutcomeFailed,
			Message: "The body's Content-Encoding is not supported: send it as identity, gzip or deflate, at most " +
				strconv.Itoa(maxCodings) + " deep",
			Details: map[string]any{"accepted_encodings": []string{"identity", "gzip", "deflate"}, "max_codings": maxCodings},
			Headers: map[string]string{fiber.HeaderAcceptEncoding: acceptedEncodings}}
	}
	if !present {
		return c.Next()
	}
	// Whatever stayed of the header, fiber's Ctx.Body would read again ("identity, identity"
	// as no body at all): the body is what this leaves.
	h.Del(fiber.HeaderContentEncoding)
	if len(codings) == 0 || len(c.Request().Body()) == 0 {
		return c.Next() // nothing to unpack: identity codings only, or no body to code
	}
	body, err := s.unpack(c.Request().Body(), codings)
	switch {
	case errors.Is(err, errBodyTooLarge):
		return s.bodyTooLarge()
	case errors.Is(err, errWasteful):
		return &apiError{Status: fiber.StatusBadRequest, Code: CodeBadRequest, Outcome: OutcomeFailed,
			Message: "The body's Content-Encoding spends far more bytes than the body it decodes to", Details: map[string]string{"reason": "wasteful_content_encoding"}}
	case err != nil:
		return &apiError{Status: fiber.StatusBadRequest, Code: CodeBadRequest, Outcome: OutcomeFailed,
			Message: "The body does not decode as its Content-Encoding says", Details: map[string]string{"reason": "invalid_content_encoding"}}
	}
	c.Request().SetBodyRaw(body)
	return c.Next()
}

var errBodyTooLarge = errors.New("handlers: the body unpacks past the limit")

// unpack decodes raw, which codings were applied to in order, and returns the result:
// errBodyTooLarge as soon as it would pass Limits.MaxBodyBytes, and the decoder's error for a
// stream that does not end as its coding says it must (a gzip cut short of its trailer is not
// a shorter body). The decoders stream into a reused buffer, so no layer holds more than its
// window, a refused bomb leaves no garbage behind once the buffer has grown, and a kept body
// costs one allocation of its own size.
func (s *server) unpack(raw []byte, codings []string) ([]byte, error) {
	limit := s.opts.Limits.MaxBodyBytes
	// layers[0] is the body as sent, each next one the decoder over the one before.
	layers := []io.Reader{bytes.NewReader(raw)}
	deadline := s.opts.Clock.Now().Add(unpackTime)
	for i := len(codings) - 1; i >= 0; i-- {
		var dec io.Reader
		var err error
		m := &metered{middle: i > 0, clk: s.opts.Clock, deadline: deadline}
		in := &meteredInput{r: layers[len(layers)-1].(byteReader), m: m} // bytes.Reader, or capped
		if codings[i] == "deflate" {
			dec, err = zlib.NewReader(in)
		} else {
			dec, err = gzip.NewReader(in)
		}
		if err != nil {
			return nil, err
		}
		dec = &meteredOutput{r: dec, m: m}
		if i > 0 {
			dec = newCapped(dec, int64(limit)) // another layer reads it
		}
		layers = append(layers, dec)
	}
	r := layers[len(layers)-1]
	buf, _ := s.unpackBufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer func() {
		clear(buf.Bytes()) // the body was a caller's text: none of it waits in the pool
		buf.Reset()
		s.unpackBufs.Put(buf)
	}()
	// io.Copy ends at the decoder's io.EOF, its only clean end; ErrUnexpectedEOF and the
	// checksum errors are the body's fault.
	n, err := io.Copy(buf, io.LimitReader(r, int64(limit)+1))
	switch {
	case err != nil:
		return nil, err
	case n > int64(limit):
		return nil, errBodyTooLarge
	}
	// zlib stops at its checksum without reading on: every layer under the last must be
	// spent too, or bytes after a stream (or a cut outer layer) would pass unread.
	var one [1]byte
	for _, l := range layers[:len(layers)-1] {
		if n, err := l.Read(one[:]); n > 0 || err != io.EOF {
			return nil, errTrailingData
		}
	}
	return bytes.Clone(buf.Bytes()), nil
}

var errTrailingData = errors.New("handlers: data after the body's coded stream")

// errWasteful is a coded body whose decoding is work out of all measure with it: deflate's empty
// blocks (each a Huffman table to build, for nothing), empty gzip members, or blocks of a
// byte or two each, a few kilobytes of which held a core for a third of a second before
// admission.
var errWasteful = errors.New("handlers: a coding spends far more than it decodes to")

// unpackTime bounds a body's decoding: a megabyte of real deflate decodes in about a
// millisecond and a half, tens of thousands of tiny blocks' tables take hundreds.
const unpackTime = 50 * time.Millisecond

// metered counts one decoder's bytes in and out, and refuses it, while it reads (one call of
// flate's Read decodes every empty block it meets before it returns), once it is wasteful:
//   - more in than out by more than a window and a few kilobytes: a real stream makes about
//     what it reads, less a stored block's few bytes and gzip's header and trailer, but flate
//     hands back what it made only a window (32 KiB) at a time;
//   - a middle layer (one another decoder reads) making more than twice what it read and
//     64 KiB: a compressed stream does not compress again, so only a bomb's does;
//   - past the body's time.
type metered struct {
	in, out  int64
	middle   bool
	clk      clock.Clock
	deadline time.Time
}

func (m *metered) wasteful() bool {
	return m.in > m.out+m.out/64+4096+32<<10 || m.middle && m.out > 2*m.in+64<<10
}

// late reports whether the body's time is up.
func (m *metered) late() bool { return m.clk.Now().After(m.deadline) }

// meteredInput is what a decoder reads: the layer below, counted and refused once wasteful. A
// byte reader, so that the decoder reads no further ahead than its stream.
type meteredInput struct {
	r byteReader
	m *metered
}

type byteReader interface {
	io.Reader
	io.ByteReader
}

func (r *meteredInput) Read(p []byte) (int, error) {
	if r.m.wasteful() || r.m.late() {
		return 0, errWasteful
	}
	n, err := r.r.Read(p)
	r.m.in += int64(n)
	return n, err
}

func (r *meteredInput) ReadByte() (byte, error) {
	if r.m.wasteful() || r.m.in&4095 == 0 && r.m.late() { // the clock read once a 4 KiB read
		return 0, errWasteful
	}
	b, err := r.r.ReadByte()
	if err == nil {
		r.m.in++
	}
	return b, err
}

// meteredOutput is a decoder, its output counted.
type meteredOutput struct {
	r io.Reader
	m *metered
}

func (r *meteredOutput) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if r.m.out += int64(n); r.m.wasteful() {
		return n, errWasteful
	}
	return n, err
}

// capped is a decoded layer that another decoder reads. It holds the layer to the body limit,
// as the last layer is held: a middle layer of hundreds of megabytes of empty blocks costs
// seconds to decode however little the next one makes of it. And it is a byte reader, so that
// the next decoder reads it through this buffer instead of a read-ahead of its own, which
// would swallow what follows the next stream before the check that every layer is spent.
type capped struct {
	br   *bufio.Reader
	left int64 // bytes it may still give, one past the limit: the one past is refused
}

func newCapped(r io.Reader, limit int64) *capped {
	return &capped{br: bufio.NewReader(r), left: limit + 1}
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	if c.left -= int64(n); c.left <= 0 {
		return n, errBodyTooLarge
	}
	return n, err
}

func (c *capped) ReadByte() (byte, error) {
	if c.left <= 1 { // the next byte would be the one past the limit, if there is one
		if _, err := c.br.ReadByte(); err != nil {
			return 0, err
		}
		c.left = 0
		return 0, errBodyTooLarge
	}
	b, err := c.br.ReadByte()
	if err == nil {
		c.left--
	}
	return b, err
}

// bodyTooLarge is the 413 of a body past Limits.MaxBodyBytes, as sent or as unpacked.
func (s *server) bodyTooLarge() *apiError {
	return &apiError{Status: fiber.StatusRequestEntityTooLarge, Code: CodeTooLarge, Outcome: OutcomeFailed,
		Message: "Request rejected by an operational limit: the body exceeds " + strconv.Itoa(s.opts.Limits.MaxBodyBytes) + " bytes",
		Details: map[string]int{"max_body_bytes": s.opts.Limits.MaxBodyBytes}}
}
