package kafkaclient

import (
	"maps"
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	for _, tc := range []struct {
		in      string
		module  string
		flag    string
		options map[string]string
	}{
		// As Kafka's security documentation writes it, with the properties file's line
		// continuations already joined.
		{`org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="connect-secret";`,
			"ScramLoginModule", "required", map[string]string{"username": "connect", "password": "connect-secret"}},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required
		    username="alice"
		    password="al;ce=\"quoted\"\\x";`,
			"PlainLoginModule", "required", map[string]string{"username": "alice", "password": `al;ce="quoted"\x`}},
		{`org.apache.kafka.common.security.scram.ScramLoginModule REQUIRED username='bob' password='p w' tokenauth=true ;`,
			"ScramLoginModule", "required", map[string]string{"username": "bob", "password": "p w", "tokenauth": "true"}},
		{`/* a comment */ org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule optional // another
		  extension_logicalCluster="lkc-1";`,
			"OAuthBearerLoginModule", "optional", map[string]string{"extension_logicalCluster": "lkc-1"}},
	} {
		j, err := ParseJAAS(tc.in)
		if err != nil {
			t.Errorf("ParseJAAS(%q): %v", tc.in, err)
			continue
		}
		if j.Module() != tc.module || j.ControlFlag != tc.flag || !maps.Equal(j.Options, tc.options) {
			t.Errorf("ParseJAAS(%q) = %s %s %v, want %s %s %v", tc.in, j.Module(), j.ControlFlag, j.Options, tc.module, tc.flag, tc.options)
		}
	}
}

func TestParseJAASErrors(t *testing.T) {
	for in, want := range map[string]string{
		``: "login module not specified",
		`org.apache.kafka.common.security.plain.PlainLoginModule`:                                   "control flag not specified",
		`org.apache.kafka.common.security.plain.PlainLoginModule mandatory username="a";`:           `invalid login module control flag "mandatory"`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="a"`:             "not terminated by a semicolon",
		`org.apache.kafka.common.security.plain.PlainLoginModule required username=;`:               `value not specified for key "username"`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required password="open;`:          "is not closed",
		`a.PlainLoginModule required username="a" password="b"; b.ScramLoginModule required u="x";`: "2 login modules given",
	} {
		_, err := ParseJAAS(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseJAAS(%q) = %v, want an error with %q", in, err, want)
		}
	}
}
