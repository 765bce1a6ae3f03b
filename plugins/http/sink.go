package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// putBudget bounds the time one PUT spends sending, under the worker's default
// plugin.call.timeout.ms (30 s), which aborts a longer call as a trap. A PUT that runs out returns
// a retriable error, and the worker puts the batch again; the records already delivered are skipped.
const putBudget = 20 * time.Second

// maxBackoff bounds the doubling retry backoff.
const maxBackoff = 10 * time.Second

// bodyInError is how much of a rejecting response's body its error (and the DLQ header) keeps.
const bodyInError = 1024

type position struct {
	topicPartition
	offset int64
}

func positionOf(r *sdk.SinkRecord) position {
	return position{topicPartition{r.Topic, r.Partition}, r.Offset}
}

type task struct {
	ctx    *sdk.TaskContext
	s      *settings
	client *http.Client
	// delivered holds the records of requests that succeeded and are not flushed yet, which are
	// not sent again when the worker puts them again.
	delivered deliveredSet
	// attempts counts the failed tries of a request across PUTs, by its first record.
	attempts map[position]int
	body     []byte
	pending  []*sdk.SinkRecord
}

func (t *task) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	s, errs := parseSettings(cfg)
	if len(errs) > 0 {
		return settingsError(errs)
	}
	t.ctx, t.s = ctx, s
	dialer := func(ctx context.Context, network, address string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, s.connectTimeout)
		defer cancel()
		return sdk.Dial(ctx, network, address)
	}
	t.client = &http.Client{
		Transport: &http.Transport{DialContext: dialer, MaxIdleConnsPerHost: 4, DisableCompression: true},
		// A redirect is not followed: the records would be sent to a URL the operator did not set.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.delivered = deliveredSet{}
	t.attempts = map[position]int{}
	return nil
}

// rejected is a response that rejects the records of a request: not retried, reported per record.
type rejected struct {
	status int
	msg    string
}

func (e *rejected) Error() string { return e.msg }

// Put sends the records in requests of batch.max.size, in order. A retriable failure that outlasts
// max.retries fails the PUT; one that outlasts putBudget returns a retriable error. A rejected
// request does not stop the others: the PUT fails once they are sent, with the first rejection.
func (t *task) Put(records []sdk.SinkRecord) error {
	start := time.Now()
	var firstRejection error
	t.pending = t.pending[:0]
	flushPending := func() error {
		if len(t.pending) == 0 {
			return nil
		}
		err := t.send(start, t.pending)
		t.pending = t.pending[:0]
		var rej *rejected
		if errors.As(err, &rej) {
			if firstRejection == nil {
				firstRejection = err
			}
			return nil
		}
		return err
	}
	for i := range records {
		r := &records[i]
		if t.delivered.has(topicPartition{r.Topic, r.Partition}, r.Offset) {
			continue
		}
		if r.Value.IsNull() {
			if t.s.failOnNull {
				if firstRejection == nil {
					firstRejection = fmt.Errorf("record %s-%d@%d has a null value (%s=fail)", r.Topic, r.Partition, r.Offset, nullValuesConfig)
				}
			}
			continue
		}
		t.pending = append(t.pending, r)
		if len(t.pending) == t.s.batchMax {
			if err := flushPending(); err != nil {
				return err
			}
		}
	}
	if err := flushPending(); err != nil {
		return err
	}
	return firstRejection
}

// send sends one request with retries. On success its records are remembered as delivered.
func (t *task) send(start time.Time, records []*sdk.SinkRecord) error {
	first := positionOf(records[0])
	t.body = t.s.appendBody(t.body[:0], records)
	for {
		left := putBudget - time.Since(start)
		if left < 100*time.Millisecond {
			return sdk.Retriable(fmt.Errorf("%s %s: the PUT spent its %s; the worker puts the records again", t.s.method, t.s.url, putBudget))
		}
		err := t.request(min(left, t.s.requestTimeout))
		if err == nil {
			delete(t.attempts, first)
			for _, r := range records {
				t.delivered.add(topicPartition{r.Topic, r.Partition}, r.Offset)
			}
			return nil
		}
		var rej *rejected
		if errors.As(err, &rej) {
			delete(t.attempts, first)
			return err
		}
		n := t.attempts[first]
		if n >= t.s.maxRetries {
			delete(t.attempts, first)
			return fmt.Errorf("%s %s failed after %d retries (%s): %w", t.s.method, t.s.url, n, maxRetriesConfig, err)
		}
		t.attempts[first] = n + 1
		wait := min(t.s.backoff<<min(n, 20), maxBackoff)
		t.ctx.Logf(sdk.LevelInfo, "%s %s failed (%v); retry %d of %d in %s", t.s.method, t.s.url, err, n+1, t.s.maxRetries, wait)
		if time.Since(start)+wait >= putBudget {
			return sdk.Retriable(fmt.Errorf("%s %s: %w; retried when the worker puts the records again", t.s.method, t.s.url, err))
		}
		time.Sleep(wait)
	}
}

// request makes one request of t.body. It returns nil on a 2xx response, *rejected on a status
// that is not retried, and another error (retriable) otherwise.
func (t *task) request(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, t.s.method, t.s.url, bytes.NewReader(t.body))
	if err != nil {
		return &rejected{msg: err.Error()}
	}
	req.Header.Set("Content-Type", t.s.contentType())
	for _, h := range t.s.headers {
		req.Header.Set(h[0], h[1])
	}
	if t.s.authorization != "" {
		req.Header.Set("Authorization", t.s.authorization)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no response within %s", timeout)
		}
		return err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("HTTP %d: the body did not arrive within %s", resp.StatusCode, timeout)
		}
		return fmt.Errorf("HTTP %d: reading the body: %w", resp.StatusCode, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	if len(body) > bodyInError {
		body = append(body[:bodyInError:bodyInError], "..."...)
	}
	msg := fmt.Sprintf("HTTP %d %s from %s %s: %s", resp.StatusCode, http.StatusText(resp.StatusCode), t.s.method, t.s.url, body)
	if t.s.retriableStatus(resp.StatusCode) {
		return errors.New(msg)
	}
	return &rejected{status: resp.StatusCode, msg: msg}
}

// Flush has nothing to do (every PUT is sent when it returns), but forgets the delivered records
// before the flushed offsets: the worker does not put them again.
func (t *task) Flush(offsets []sdk.TopicPartitionOffset) error {
	for _, o := range offsets {
		t.delivered.forgetBefore(topicPartition{o.Topic, o.Partition}, o.Offset)
	}
	return nil
}

func (t *task) Stop() error {
	if t.client != nil {
		t.client.CloseIdleConnections()
	}
	return nil
}
