package config

// Kafka are the settings of the worker's Kafka clients as Kafka's Java clients read them. Package
// kafkaclient checks each one against franz-go, turns them into client options and names the
// keys it cannot honour; here they are only sorted by client.
type Kafka struct {
	// Connection holds the top-level keys that say how to reach the brokers, by their full
	// names: bootstrap.servers, security.protocol, sasl.* and ssl.*. Every client uses them.
	Connection map[string]string
	// Producer, Consumer and Admin are the worker's producer.*, consumer.* and admin.* keys, with
	// the prefix removed: the settings of a source task's producer, a sink task's consumer and
	// the admin client.
	Producer, Consumer, Admin map[string]string
	// OverridePolicy is connector.client.config.override.policy (All): which client keys a
	// connector may override.
	OverridePolicy string
}

// kafkaKeys are the client keys. The sub-keys of sasl., ssl., producer., consumer. and admin. are
// Kafka client settings, which kafkaclient checks one by one.
var kafkaKeys = []Key{
	{Name: "security.protocol", Default: "PLAINTEXT", Doc: "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"},
	{Name: "sasl.", Doc: "SASL settings of every client"},
	{Name: "ssl.", Doc: "TLS settings of every client"},
	{Name: "producer.", Doc: "source task producers' settings"},
	{Name: "consumer.", Doc: "sink task consumers' settings"},
	{Name: "admin.", Doc: "the admin client's settings"},
	{Name: "connector.client.config.override.policy", Default: "All", Doc: "which *.override.* keys a connector may set"},
}

// ParseKafka returns the Kafka client section of props, for tests of the clients; a worker gets
// it from Parse.
func ParseKafka(props map[string]string) Kafka {
	return parseKafka(&parser{props: props})
}

func parseKafka(p *parser) Kafka {
	k := Kafka{
		Connection:     map[string]string{},
		Producer:       p.under("producer."),
		Consumer:       p.under("consumer."),
		Admin:          p.under("admin."),
		OverridePolicy: p.str("connector.client.config.override.policy"),
	}
	for _, key := range []string{"bootstrap.servers", "security.protocol"} {
		if v, ok := p.raw(key); ok {
			k.Connection[key] = v
		}
	}
	for _, prefix := range []string{"sasl.", "ssl."} {
		for rest, v := range p.under(prefix) {
			k.Connection[prefix+rest] = v
		}
	}
	return k
}
