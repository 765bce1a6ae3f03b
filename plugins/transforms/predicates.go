package main

import (
	"regexp"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

const predPkg = "org.apache.kafka.connect.transforms.predicates."

func registerPredicates() {
	sdk.RegisterPredicate(sdk.Info{Name: "TopicNameMatches", Class: predPkg + "TopicNameMatches", Version: version, Config: []sdk.ConfigDef{
		{Name: "pattern", Required: true, Importance: sdk.Medium, Validator: validRegex,
			Documentation: "A Java regular expression for matching against the name of a record's topic."}}},
		func() sdk.Predicate { return &topicNameMatches{} })
	sdk.RegisterPredicate(sdk.Info{Name: "HasHeaderKey", Class: predPkg + "HasHeaderKey", Version: version, Config: []sdk.ConfigDef{
		{Name: "name", Required: true, Importance: sdk.Medium, Validator: nonEmptyString, Documentation: "The header name."}}},
		func() sdk.Predicate { return &hasHeaderKey{} })
	sdk.RegisterPredicate(sdk.Info{Name: "RecordIsTombstone", Class: predPkg + "RecordIsTombstone", Version: version},
		func() sdk.Predicate { return recordIsTombstone{} })
}

type topicNameMatches struct {
	re      *regexp.Regexp
	matches topicMemo[bool]
}

func (p *topicNameMatches) Configure(cfg sdk.Config) error {
	re, err := compileJava(cfg["pattern"])
	if err != nil {
		return sdk.InvalidConfig("pattern", cfg["pattern"], "entry must be a Java-compatible regular expression: "+err.Error())
	}
	p.re = re
	return nil
}

func (p *topicNameMatches) Test(r *sdk.Record) (bool, error) {
	return p.matches.get(r.Topic, p.re.MatchString), nil
}

type hasHeaderKey struct{ name string }

func (p *hasHeaderKey) Configure(cfg sdk.Config) error {
	p.name = cfg["name"]
	return nil
}

func (p *hasHeaderKey) Test(r *sdk.Record) (bool, error) {
	for _, h := range r.Headers {
		if h.Key == p.name {
			return true, nil
		}
	}
	return false, nil
}

type recordIsTombstone struct{}

func (recordIsTombstone) Configure(sdk.Config) error       { return nil }
func (recordIsTombstone) Test(r *sdk.Record) (bool, error) { return connect.IsNull(r.Value), nil }
