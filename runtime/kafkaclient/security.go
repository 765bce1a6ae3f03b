package kafkaclient

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// security applies security.protocol and, as the protocol needs them, the sasl.* and ssl.* keys.
// Those the protocol does not use are warned about, as Kafka would silently ignore them.
func (b *builder) security() {
	a := &b.c.Auth
	a.Protocol = "PLAINTEXT"
	if st, ok := b.s["security.protocol"]; ok {
		b.used["security.protocol"] = true
		a.Protocol = strings.ToUpper(strings.TrimSpace(st.Value))
		switch a.Protocol {
		case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		default:
			b.fail("security.protocol", "want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
			return
		}
	}
	useTLS := a.Protocol == "SSL" || a.Protocol == "SASL_SSL"
	useSASL := a.Protocol == "SASL_PLAINTEXT" || a.Protocol == "SASL_SSL"
	if useTLS {
		if cfg := b.tlsConfig(); cfg != nil {
			a.TLS = true
			b.opt(kgo.Dialer(tlsDialer(cfg, b.dialTimeout())))
		}
	}
	if useSASL {
		if m := b.sasl(); m != nil {
			b.opt(kgo.SASL(m))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b.s)) {
		if b.used[k] {
			continue
		}
		if strings.HasPrefix(k, "ssl.") && !useTLS || strings.HasPrefix(k, "sasl.") && !useSASL {
			b.used[k] = true
			b.warn(k, fmt.Sprintf("ignored: security.protocol=%s does not use it", a.Protocol))
		}
	}
}

// value returns a setting's trimmed value and marks it used.
func (b *builder) value(k string) (string, bool) {
	st, ok := b.s[k]
	if ok {
		b.used[k] = true
	}
	return strings.TrimSpace(st.Value), ok
}

// sasl builds the sasl.mechanism with the credentials of sasl.jaas.config.
func (b *builder) sasl() sasl.Mechanism {
	a := &b.c.Auth
	mech, ok := b.value("sasl.mechanism")
	if !ok || mech == "" {
		b.errs = append(b.errs, fmt.Errorf("security.protocol=%s needs sasl.mechanism: Kafka's default, GSSAPI (Kerberos), is not supported; set PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", a.Protocol))
		return nil
	}
	a.Mechanism, a.MechanismKey = strings.ToUpper(mech), b.s["sasl.mechanism"].Key
	switch a.Mechanism {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER":
	default:
		b.fail("sasl.mechanism", "want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER")
		return nil
	}
	raw, ok := b.value("sasl.jaas.config")
	if !ok {
		b.errs = append(b.errs, fmt.Errorf("%s=%s needs sasl.jaas.config with the login module and its credentials, e.g. %s", a.MechanismKey, a.Mechanism, jaasExample(a.Mechanism)))
		return nil
	}
	a.JAASKey = b.s["sasl.jaas.config"].Key
	jaas, err := ParseJAAS(raw)
	if err != nil {
		// The value holds a password: name the key, never echo it.
		b.errs = append(b.errs, fmt.Errorf("%s: %v (expected e.g. %s)", a.JAASKey, err, jaasExample(a.Mechanism)))
		return nil
	}
	want := map[string]string{"PLAIN": "PlainLoginModule", "SCRAM-SHA-256": "ScramLoginModule", "SCRAM-SHA-512": "ScramLoginModule", "OAUTHBEARER": "OAuthBearerLoginModule"}[a.Mechanism]
	if jaas.Module() != want {
		b.errs = append(b.errs, fmt.Errorf("%s: login module %s does not do %s=%s; use %s", a.JAASKey, jaas.LoginModule, a.MechanismKey, a.Mechanism, jaasExample(a.Mechanism)))
		return nil
	}
	if a.Mechanism == "OAUTHBEARER" {
		return b.oauth(jaas)
	}
	user, pass := jaas.Options["username"], jaas.Options["password"]
	if user == "" || pass == "" {
		b.errs = append(b.errs, fmt.Errorf("%s: %s needs the username and password options", a.JAASKey, jaas.Module()))
		return nil
	}
	a.User = user
	switch a.Mechanism {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass, IsToken: jaas.Options["tokenauth"] == "true"}.AsSha256Mechanism()
	default:
		return scram.Auth{User: user, Pass: pass, IsToken: jaas.Options["tokenauth"] == "true"}.AsSha512Mechanism()
	}
}

// oauth is OAUTHBEARER with a token read from a file, as Kafka's login callback handler does for
// sasl.oauthbearer.token.endpoint.url=file:///path. The file is read at each authentication, so
// a token rotated in place is picked up on the next connection.
func (b *builder) oauth(jaas JAAS) sasl.Mechanism {
	const key = "sasl.oauthbearer.token.endpoint.url"
	raw, ok := b.value(key)
	u, err := url.Parse(raw)
	if !ok || err != nil || u.Scheme != "file" || u.Path == "" {
		b.errs = append(b.errs, fmt.Errorf("sasl.mechanism=OAUTHBEARER needs a token file: set %s=file:///path/to/token (fetching tokens from an identity provider is not supported)", key))
		return nil
	}
	path := u.Path
	// Kafka needs its login callback handler named for a token endpoint; the file is read here.
	if h, ok := b.value("sasl.login.callback.handler.class"); ok && !strings.HasSuffix(h, ".OAuthBearerLoginCallbackHandler") {
		b.warn("sasl.login.callback.handler.class", "ignored: the token is read from "+key)
	}
	if _, err := os.Stat(path); err != nil {
		b.fail(key, err.Error())
		return nil
	}
	b.c.Auth.User = "(token in " + path + ")"
	ext := map[string]string{}
	for k, v := range jaas.Options {
		if name, ok := strings.CutPrefix(k, "extension_"); ok {
			ext[name] = v
		}
	}
	return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return oauth.Auth{}, fmt.Errorf("%s: reading the token: %w", key, err)
		}
		tok := strings.TrimSpace(string(data))
		if tok == "" {
			return oauth.Auth{}, fmt.Errorf("%s: token file %s is empty", key, path)
		}
		return oauth.Auth{Token: tok, Extensions: ext}, nil
	})
}

func jaasExample(mech string) string {
	switch mech {
	case "PLAIN":
		return `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`
	case "OAUTHBEARER":
		return `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`
	}
	return `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`
}
