package jobs

import (
	"container/list"
	"slices"
	"sync"
)

// detailsCache keeps done jobs' details (the spans and documents of all their results), which
// never change once a job is done, so that a client polling a large job does not have every
// result read and opened again for each answer. It holds at most max bytes (an estimate),
// the least recently read going first.
type detailsCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of *details, the most recently read in front
	byJob map[string]*list.Element
}

type details struct {
	job   string
	spans []Span
	docs  []DocumentInfo
	size  int
}

// detailsCacheBytes bounds each Manager's cache.
const detailsCacheBytes = 32 << 20

func newDetailsCache(max int) *detailsCache {
	return &detailsCache{max: max, order: list.New(), byJob: map[string]*list.Element{}}
}

func (c *detailsCache) get(job string) ([]Span, []DocumentInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byJob[job]
	if !ok {
		return nil, nil, false
	}
	c.order.MoveToFront(e)
	d := e.Value.(*details)
	return d.spans, d.docs, true
}

func (c *detailsCache) put(job string, spans []Span, docs []DocumentInfo) {
	d := &details{job: job, spans: slices.Clip(spans), docs: slices.Clip(docs), size: 64}
	for _, s := range spans {
		d.size += 96 + len(s.DocumentID) + len(s.Label) + len(s.TextHash)
	}
	for _, doc := range docs {
		d.size += 64 + len(doc.ID) + len(doc.TextHash)
	}
	if d.size > c.max/4 {
		return // one job would push most others out: read it each time instead
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byJob[job]; ok {
		c.size -= e.Value.(*details).size
		c.order.Remove(e)
	}
	c.byJob[job] = c.order.PushFront(d)
	c.size += d.size
	for c.size > c.max {
		old := c.order.Remove(c.order.Back()).(*details)
		delete(c.byJob, old.job)
		c.size -= old.size
	}
}
