package natsbox

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The reads below are JetStream's own API, which the jetstream package does not offer: reads
// of many messages in one request (direct gets, which need the stream's AllowDirect), and a
// message get that only the stream's leader answers.

// DirectBatch reads up to max messages of stream from sequence from on (0: its first), those
// whose subject matches filter (wildcards allowed), in stream order. next is where the read
// after these starts; more says whether the stream held more matching messages past them when
// it answered. Any server with a copy of the stream may answer, so a read may lag the leader
// by what it has not replicated yet.
func (b *Box) DirectBatch(ctx context.Context, stream string, from uint64, max int, filter string) (msgs []*jetstream.RawStreamMsg, next uint64, more bool, err error) {
	next = max1(from)
	max = min(max, maxMultiLast) // what one answer's room in batch holds
	req, _ := json.Marshal(map[string]any{"seq": next, "batch": max, "next_by_subj": filter})
	err = b.batch(ctx, stream, req, func(m *jetstream.RawStreamMsg) {
		msgs = append(msgs, m)
		next = m.Sequence + 1
	}, func(eob *nats.Msg) {
		pending, _ := strconv.ParseUint(eob.Header.Get("Nats-Num-Pending"), 10, 64)
		more = pending > 0
	})
	return msgs, next, more, err
}

func max1(seq uint64) uint64 {
	if seq == 0 {
		return 1
	}
	return seq
}

// LastBefore is the last message of each subject matching filter at a sequence below seq
// (0: of the whole stream). Like DirectBatch, any copy may answer.
func (b *Box) LastBefore(ctx context.Context, stream, filter string, seq uint64) ([]*jetstream.RawStreamMsg, error) {
	if seq == 1 {
		return nil, nil // nothing is before the first
	}
	msgs, err := b.lastBefore(ctx, stream, []string{filter}, seq)
	if !errors.Is(err, errTooManySubjects) {
		return msgs, err
	}
	// More subjects than one answer may hold (an audit stream of many replicas' chains): by
	// name, maxMultiLast at a time.
	st, err := b.js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("natsbox: stream %q: %w", stream, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("natsbox: stream %q: %w", stream, err)
	}
	msgs = nil
	for names := range slices.Chunk(slices.Sorted(maps.Keys(info.State.Subjects)), maxMultiLast) {
		part, err := b.lastBefore(ctx, stream, names, seq)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, part...)
	}
	slices.SortFunc(msgs, func(a, b *jetstream.RawStreamMsg) int { return cmp.Compare(a.Sequence, b.Sequence) })
	return msgs, nil
}

// maxMultiLast is the most subjects the server answers a multi_last request for; past it the
// request is refused with errTooManySubjects.
const maxMultiLast = 1024

// errTooManySubjects is the server's 413 to a multi_last request matching more subjects than
// it answers for.
var errTooManySubjects = errors.New("more subjects than one request may ask for")

func (b *Box) lastBefore(ctx context.Context, stream string, filters []string, seq uint64) ([]*jetstream.RawStreamMsg, error) {
	q := map[string]any{"multi_last": filters}
	if seq > 1 {
		q["up_to_seq"] = seq - 1
	}
	req, _ := json.Marshal(q)
	var msgs []*jetstream.RawStreamMsg
	err := b.batch(ctx, stream, req, func(m *jetstream.RawStreamMsg) { msgs = append(msgs, m) }, nil)
	return msgs, err
}

// requestTimeout bounds a read whose context has no deadline of its own: a request that no
// server answers (a stream without a leader) must not wait for ever.
const requestTimeout = 10 * time.Second

func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, requestTimeout)
}

// batch sends a direct get request and hands each message of its answer to each, and its end
// of batch to end (when not nil). An answer of no messages is none, not an error.
func (b *Box) batch(ctx context.Context, stream string, req []byte, each func(*jetstream.RawStreamMsg), end func(*nats.Msg)) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	inbox := b.nc.NewRespInbox()
	// A channel, not a synchronous subscription: that one answers a message with an empty
	// body and a Status of 503 as "no responders" before this reads it, and a stored message
	// may be published so. Its room holds the largest answer asked for (maxMultiLast
	// messages and the end of the batch), since a full channel drops what comes.
	msgs := make(chan *nats.Msg, 2*maxMultiLast)
	sub, err := b.nc.ChanSubscribe(inbox, msgs)
	if err != nil {
		return fmt.Errorf("natsbox: stream %q: %w", stream, err)
	}
	defer sub.Unsubscribe()
	if err := b.nc.PublishRequest("$JS.API.DIRECT.GET."+stream, inbox, req); err != nil {
		return fmt.Errorf("natsbox: stream %q: %w", stream, err)
	}
	for {
		var m *nats.Msg
		select {
		case m = <-msgs:
		case <-ctx.Done():
			return fmt.Errorf("natsbox: stream %q: reading: %w", stream, ctx.Err())
		}
		// A stored message comes with its sequence; a status (the end of the batch, an
		// error) without: a publisher's own Status header does not end a read.
		if len(m.Data) == 0 && m.Header.Get("Status") != "" && m.Header.Get(jetstream.SequenceHeader) == "" {
			switch m.Header.Get("Status") {
			case "204": // the end of the batch
				if end != nil {
					end(m)
				}
				return nil
			case "404": // nothing matched
				return nil
			case "503":
				return fmt.Errorf("natsbox: stream %q: %w", stream, nats.ErrNoResponders)
			case "413":
				return fmt.Errorf("natsbox: stream %q: %w", stream, errTooManySubjects)
			default:
				return fmt.Errorf("natsbox: stream %q: %s %s", stream, m.Header.Get("Status"), m.Header.Get("Description"))
			}
		}
		seq, err := strconv.ParseUint(serverHeader(m.Header, jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return fmt.Errorf("natsbox: stream %q: a message without its sequence", stream)
		}
		at, _ := time.Parse(time.RFC3339Nano, serverHeader(m.Header, jetstream.TimeStampHeaer))
		each(&jetstream.RawStreamMsg{Subject: serverHeader(m.Header, jetstream.SubjectHeader), Sequence: seq,
			Header: m.Header, Data: m.Data, Time: at})
	}
}

// serverHeader is the value the server gave a direct get's answer under key: the last one.
// The server adds its headers after the stored message's own, which a publisher may have
// written under the same names (a Nats-Time-Stamp in the future, to end a read early).
func serverHeader(h nats.Header, key string) string {
	if v := h.Values(key); len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

// LastOf is the last message on subject as the stream's leader has it, or nil when the
// subject has none. Unlike a direct get, no copy that lags answers: what it returns is the
// last message stored.
func (b *Box) LastOf(ctx context.Context, stream, subject string) (*jetstream.RawStreamMsg, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": subject})
	ctx, cancel := bounded(ctx)
	defer cancel()
	resp, err := b.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, fmt.Errorf("natsbox: stream %q: %w", stream, err)
	}
	var got struct {
		Message *struct {
			Subject string    `json:"subject"`
			Seq     uint64    `json:"seq"`
			Header  []byte    `json:"hdrs"`
			Data    []byte    `json:"data"`
			Time    time.Time `json:"time"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &got); err != nil {
		return nil, fmt.Errorf("natsbox: stream %q: %w", stream, err)
	}
	switch {
	case got.Error != nil && got.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return nil, nil
	case got.Error != nil:
		return nil, fmt.Errorf("natsbox: stream %q: %s", stream, got.Error.Description)
	case got.Message == nil:
		return nil, errors.New("natsbox: stream " + strconv.Quote(stream) + ": an answer without its message")
	}
	m := &jetstream.RawStreamMsg{Subject: got.Message.Subject, Sequence: got.Message.Seq, Data: got.Message.Data,
		Time: got.Message.Time}
	if len(got.Message.Header) > 0 {
		if m.Header, err = nats.DecodeHeadersMsg(got.Message.Header); err != nil {
			return nil, fmt.Errorf("natsbox: stream %q: %w", stream, err)
		}
	}
	return m, nil
}

// SeqAt is the sequence of stream's first message of a subject matching filter stored at or
// after t, or 0 when there is none.
func (b *Box) SeqAt(ctx context.Context, stream, filter string, t time.Time) (uint64, error) {
	req, _ := json.Marshal(map[string]any{"start_time": t.UTC(), "batch": 1, "next_by_subj": filter})
	var seq uint64
	err := b.batch(ctx, stream, req, func(m *jetstream.RawStreamMsg) { seq = m.Sequence }, nil)
	return seq, err
}
