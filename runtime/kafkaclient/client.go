package kafkaclient

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Client is what Build makes of one client's settings.
type Client struct {
	// Opts are the franz-go options, to be given after the caller's defaults and before the
	// options the caller cannot do without (a sink's group, say).
	Opts []kgo.Opt

	// Warnings name each key that has no franz-go equivalent or that the worker manages itself,
	// and say what happens instead. The caller logs them.
	Warnings []string

	// MaxPollRecords is max.poll.records for a consumer (records per sink PUT); 0 when unset.
	// franz-go takes it per poll, so it is not an option.
	MaxPollRecords int

	// Auth says how the client authenticates, for error messages.
	Auth Auth
}

// Auth is what a client's security settings ask for.
type Auth struct {
	Protocol     string // security.protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
	Mechanism    string // sasl.mechanism ("" without SASL)
	MechanismKey string
	User         string // the SASL user name, from sasl.jaas.config
	JAASKey      string
	TLS          bool
}

// SettingError is a bad value, naming the key as written.
type SettingError struct {
	Key   string // as written: producer.override.acks
	Value string
	Msg   string
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("invalid value %q for %s: %s", e.Value, e.Key, e.Msg)
}

// SettingErrors returns the SettingErrors in an error returned by Build.
func SettingErrors(err error) []*SettingError {
	var out []*SettingError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, SettingErrors(e)...)
		}
		return out
	}
	var se *SettingError
	if errors.As(err, &se) {
		out = append(out, se)
	}
	return out
}

// Build maps a client's settings to franz-go options. Every bad value is reported (joined
// SettingErrors); keys with no equivalent become warnings.
func Build(s Settings, role Role) (*Client, error) {
	b := &builder{s: s, role: role, used: map[string]bool{}, c: &Client{}}
	b.security()
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if b.used[k] {
			continue
		}
		if h, ok := handlerFor(role, k); ok {
			b.used[k] = true
			h(b, k, strings.TrimSpace(s[k].Value))
			continue
		}
		if why, ok := managed[k]; ok && role != Internal {
			b.warn(k, "ignored: "+why)
			continue
		}
		if role == Internal && !IsConnectionKey(k) {
			continue // top-level worker keys are the worker's, not a client's
		}
		b.warn(k, "ignored: franz-go has no equivalent setting")
	}
	b.producerCombos()
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return b.c, nil
}

type builder struct {
	s    Settings
	role Role
	used map[string]bool
	c    *Client
	errs []error

	// producer keys that decide together
	acks                      string
	idempotence               *bool
	inflight                  int
	batchSize, maxRequestSize int
	compression               string
	gzipLevel, zstdLevel      *int
}

func (b *builder) opt(o ...kgo.Opt) { b.c.Opts = append(b.c.Opts, o...) }

func (b *builder) warn(k, msg string) {
	b.c.Warnings = append(b.c.Warnings, b.s[k].Key+"="+b.s[k].Value+": "+msg)
}

func (b *builder) fail(k, msg string) {
	b.errs = append(b.errs, &SettingError{Key: b.s[k].Key, Value: b.s[k].Value, Msg: msg})
}

func (b *builder) int(k, v string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(v)
	if err != nil {
		b.fail(k, "not an integer")
		return 0, false
	}
	if n < lo || n > hi {
		b.fail(k, fmt.Sprintf("must be between %d and %d", lo, hi))
		return 0, false
	}
	return n, true
}

// millisOpt is the setting of a key in milliseconds that maps onto one franz-go option.
func millisOpt[O kgo.Opt](opt func(time.Duration) O) func(b *builder, k, v string) {
	return func(b *builder, k, v string) {
		if d, ok := b.millis(k, v); ok {
			b.opt(opt(d))
		}
	}
}

func (b *builder) millis(k, v string) (time.Duration, bool) {
	n, ok := b.int(k, v, 0, 1<<31-1)
	return time.Duration(n) * time.Millisecond, ok
}

func (b *builder) bool(k, v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	b.fail(k, "want true or false")
	return false, false
}

type handler func(b *builder, k, v string)

// handlerFor returns what a client key of the role maps to.
func handlerFor(role Role, k string) (handler, bool) {
	var h handler
	var ok bool
	switch role {
	case Producer:
		h, ok = producerKeys[k]
	case Consumer:
		h, ok = consumerKeys[k]
	case Admin:
		h, ok = adminKeys[k]
	}
	if !ok {
		h, ok = commonKeys[k]
	}
	return h, ok
}

// managed are keys that a Kafka Connect worker sets itself; as in Kafka, they are not the
// user's to change, but a user who sets one learns it.
var managed = map[string]string{
	"key.serializer":          "records are sent as the bytes the converters produced",
	"value.serializer":        "records are sent as the bytes the converters produced",
	"key.deserializer":        "records are read as bytes for the converters",
	"value.deserializer":      "records are read as bytes for the converters",
	"enable.auto.commit":      "a sink task commits its offsets itself, after the plugin has flushed them",
	"auto.commit.interval.ms": "a sink task commits on offset.flush.interval.ms",
	"transactional.id":        "exactly-once source delivery is not supported",
}

var commonKeys = map[string]handler{
	"bootstrap.servers": func(b *builder, k, v string) {
		var seeds []string
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				seeds = append(seeds, s)
			}
		}
		if len(seeds) == 0 {
			b.fail(k, "no broker address")
			return
		}
		b.opt(kgo.SeedBrokers(seeds...))
	},
	"client.id":           func(b *builder, k, v string) { b.opt(kgo.ClientID(v)) },
	"metadata.max.age.ms": millisOpt(kgo.MetadataMaxAge),
	"retry.backoff.ms": func(b *builder, k, v string) {
		if d, ok := b.millis(k, v); ok {
			b.opt(kgo.RetryBackoffFn(func(int) time.Duration { return d }))
		}
	},
	"connections.max.idle.ms":            millisOpt(kgo.ConnIdleTimeout),
	"socket.connection.setup.timeout.ms": millisOpt(kgo.DialTimeout),
	// franz-go's "roughly equivalent to request.timeout.ms"; a producer also sends it to the
	// broker as the produce timeout, as Java's does.
	"request.timeout.ms": func(b *builder, k, v string) {
		if d, ok := b.millis(k, v); ok {
			b.opt(kgo.RequestTimeoutOverhead(d))
			if b.role == Producer {
				b.opt(kgo.ProduceRequestTimeout(d))
			}
		}
	},
	"retries": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 0, 1<<31-1); ok {
			if b.role == Producer {
				b.opt(kgo.RecordRetries(n))
			} else {
				b.opt(kgo.RequestRetries(n))
			}
		}
	},
}

var adminKeys = map[string]handler{}

var consumerKeys = map[string]handler{
	"fetch.min.bytes": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 1, 1<<31-1); ok {
			b.opt(kgo.FetchMinBytes(int32(n)))
		}
	},
	"fetch.max.bytes": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 1, 1<<31-1); ok {
			b.opt(kgo.FetchMaxBytes(int32(n)))
		}
	},
	"max.partition.fetch.bytes": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 1, 1<<31-1); ok {
			b.opt(kgo.FetchMaxPartitionBytes(int32(n)))
		}
	},
	"fetch.max.wait.ms": millisOpt(kgo.FetchMaxWait),
	"max.poll.records": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 1, 1<<31-1); ok {
			b.c.MaxPollRecords = n
		}
	},
	"isolation.level": func(b *builder, k, v string) {
		switch strings.ToLower(v) {
		case "read_committed":
			b.opt(kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		case "read_uncommitted":
			b.opt(kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
		default:
			b.fail(k, "want read_committed or read_uncommitted")
		}
	},
	"auto.offset.reset": func(b *builder, k, v string) {
		switch strings.ToLower(v) {
		case "earliest":
			b.opt(kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		case "latest":
			b.opt(kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
		case "none":
			b.opt(kgo.ConsumeResetOffset(kgo.NoResetOffset()))
		default:
			b.fail(k, "want earliest, latest or none")
		}
	},
	"session.timeout.ms":    millisOpt(kgo.SessionTimeout),
	"heartbeat.interval.ms": millisOpt(kgo.HeartbeatInterval),
	// franz-go: "RebalanceTimeout ... corresponds to Kafka's max.poll.interval.ms".
	"max.poll.interval.ms": millisOpt(kgo.RebalanceTimeout),
	"group.instance.id":    func(b *builder, k, v string) { b.opt(kgo.InstanceID(v)) },
	"client.rack":          func(b *builder, k, v string) { b.opt(kgo.Rack(v)) },
	"check.crcs": func(b *builder, k, v string) {
		if on, ok := b.bool(k, v); ok && !on {
			b.opt(kgo.DisableFetchCRCValidation())
		}
	},
	// The sink's group: consumer.override.group.id is read where the group is chosen
	// (connect-<connector> otherwise); a worker-wide consumer.group.id would put every sink in
	// one group.
	"group.id": func(b *builder, k, v string) {
		if !strings.Contains(b.s[k].Key, ".override.") {
			b.warn(k, "ignored: a sink's consumer group is connect-<connector>, or the connector's consumer.override.group.id")
		}
	},
}

var producerKeys = map[string]handler{
	"acks": func(b *builder, k, v string) {
		switch v {
		case "all", "-1", "0", "1":
			b.acks = v
		default:
			b.fail(k, "want all, -1, 0 or 1")
		}
	},
	"enable.idempotence": func(b *builder, k, v string) {
		if on, ok := b.bool(k, v); ok {
			b.idempotence = &on
		}
	},
	"max.in.flight.requests.per.connection": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 1, 1<<31-1); ok {
			b.inflight = n
		}
	},
	"compression.type": func(b *builder, k, v string) {
		switch v = strings.ToLower(v); v {
		case "none", "gzip", "snappy", "lz4", "zstd":
			b.compression = v
		default:
			b.fail(k, "want none, gzip, snappy, lz4 or zstd")
		}
	},
	"compression.gzip.level": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, -1, 9); ok {
			b.gzipLevel = &n
		}
	},
	"compression.zstd.level": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, -131072, 22); ok {
			b.zstdLevel = &n
		}
	},
	"linger.ms": millisOpt(kgo.ProducerLinger),
	"batch.size": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 0, 1<<30); ok {
			b.batchSize = n
		}
	},
	"max.request.size": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 512, 1<<30); ok {
			b.maxRequestSize = n
		}
	},
	"buffer.memory": func(b *builder, k, v string) {
		if n, ok := b.int(k, v, 1, 1<<62); ok {
			b.opt(kgo.MaxBufferedBytes(n))
		}
	},
	"delivery.timeout.ms": millisOpt(kgo.RecordDeliveryTimeout),
}

// defaultBatchMaxBytes is franz-go's default cap on a record batch (Kafka's max.message.bytes).
const defaultBatchMaxBytes = 1000012

// producerCombos applies the producer keys that decide together, as Kafka's ProducerConfig does.
func (b *builder) producerCombos() {
	if b.role != Producer {
		return
	}
	// Idempotence needs acks=all: with other acks it is off unless asked for, and then an error.
	idem := b.acks == "" || b.acks == "all" || b.acks == "-1"
	if b.idempotence != nil {
		if *b.idempotence && !idem {
			b.fail("enable.idempotence", "enable.idempotence=true requires acks=all")
			return
		}
		idem = *b.idempotence
	}
	switch b.acks {
	case "all", "-1":
		b.opt(kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		b.opt(kgo.RequiredAcks(kgo.LeaderAck()))
	case "0":
		b.opt(kgo.RequiredAcks(kgo.NoAck()))
	}
	if !idem {
		b.opt(kgo.DisableIdempotentWrite())
		if b.inflight > 0 {
			b.opt(kgo.MaxProduceRequestsInflightPerBroker(b.inflight))
		}
	} else if b.inflight > 5 {
		b.fail("max.in.flight.requests.per.connection", "must be at most 5 with idempotence (set enable.idempotence=false for more)")
	} else if b.inflight > 0 && b.inflight < 5 {
		b.warn("max.in.flight.requests.per.connection", "franz-go keeps 5 requests in flight per broker with idempotence, which keeps order")
	}

	// franz-go has one cap for a batch and for the largest record (ProducerBatchMaxBytes);
	// Java has batch.size (a batch's target) and max.request.size (the largest record). The
	// cap is the larger of the two, so that no record Java would send is refused.
	if b.batchSize > 0 || b.maxRequestSize > 0 {
		recordCap := b.maxRequestSize
		if recordCap == 0 {
			recordCap = defaultBatchMaxBytes
		}
		limit := max(b.batchSize, recordCap)
		if b.batchSize > 0 && b.batchSize < recordCap {
			b.warn("batch.size", fmt.Sprintf("franz-go fills a batch up to the largest record it may send (max.request.size, %d bytes); linger.ms bounds the wait", recordCap))
		}
		b.opt(kgo.ProducerBatchMaxBytes(int32(limit)))
	}

	if b.compression != "" {
		b.opt(kgo.ProducerBatchCompression(b.codec()))
	}
}

// codec is compression.type with its level. Unset, franz-go's default stays: snappy when the
// broker supports it.
func (b *builder) codec() kgo.CompressionCodec {
	switch b.compression {
	case "gzip":
		c := kgo.GzipCompression()
		if b.gzipLevel != nil {
			c = c.WithLevel(*b.gzipLevel)
		}
		return c
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		c := kgo.ZstdCompression()
		if b.zstdLevel != nil {
			c = c.WithLevel(zstdSpeed(*b.zstdLevel))
		}
		return c
	}
	return kgo.NoCompression()
}

// zstdSpeed maps a zstd level (Kafka's compression.zstd.level) to the four speeds of the zstd
// encoder franz-go uses, as that encoder's own EncoderLevelFromZstd does.
func zstdSpeed(level int) int {
	switch {
	case level < 3:
		return 1 // fastest
	case level < 6:
		return 2 // default
	case level < 10:
		return 3 // better compression
	}
	return 4 // best compression
}
