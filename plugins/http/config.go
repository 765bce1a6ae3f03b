package main

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// The connector's settings, with Confluent's names.
const (
	apiURLConfig          = "http.api.url"
	methodConfig          = "request.method"
	headersConfig         = "headers"
	headerSeparatorConfig = "header.separator"
	authTypeConfig        = "auth.type"
	userConfig            = "connection.user"
	passwordConfig        = "connection.password"
	bearerTokenConfig     = "bearer.token"
	bodyFormatConfig      = "request.body.format"
	batchMaxSizeConfig    = "batch.max.size"
	batchAsArrayConfig    = "batch.json.as.array"
	batchPrefixConfig     = "batch.prefix"
	batchSuffixConfig     = "batch.suffix"
	batchSeparatorConfig  = "batch.separator"
	maxRetriesConfig      = "max.retries"
	retryBackoffConfig    = "retry.backoff.ms"
	retryCodesConfig      = "retry.on.status.codes"
	connectTimeoutConfig  = "http.connect.timeout.ms"
	requestTimeoutConfig  = "http.request.timeout.ms"
	nullValuesConfig      = "behavior.on.null.values"
	proxyHostConfig       = "http.proxy.host"
)

var configDefs = []sdk.ConfigDef{
	{Name: apiURLConfig, Required: true, Importance: sdk.High, Documentation: "HTTP API URL."},
	{Name: methodConfig, Default: new("POST"), Importance: sdk.High,
		Documentation: "HTTP request method: POST, PUT or PATCH."},
	{Name: headersConfig, Default: new(""), Importance: sdk.High,
		Documentation: "HTTP headers of every request, Name:Value, separated by header.separator."},
	{Name: headerSeparatorConfig, Default: new("|"), Importance: sdk.High, Documentation: "Separator of the headers in headers."},
	{Name: authTypeConfig, Default: new("NONE"), Importance: sdk.High,
		Documentation: "Authentication: NONE, BASIC (connection.user, connection.password) or BEARER (bearer.token). OAUTH2 is not supported."},
	{Name: userConfig, Default: new(""), Importance: sdk.High, Documentation: "The user of basic authentication."},
	{Name: passwordConfig, Type: sdk.TypePassword, Default: new(""), Importance: sdk.High, Documentation: "The password of basic authentication."},
	{Name: bearerTokenConfig, Type: sdk.TypePassword, Default: new(""), Importance: sdk.High, Documentation: "The token of bearer authentication."},
	{Name: bodyFormatConfig, Default: new("string"), Importance: sdk.Medium,
		Documentation: "How a value is sent: string (its text) or json (its JSON)."},
	{Name: batchMaxSizeConfig, Type: sdk.TypeInt, Default: new("1"), Importance: sdk.High,
		Documentation: "The most records in one request."},
	{Name: batchAsArrayConfig, Type: sdk.TypeBoolean, Default: new("false"), Importance: sdk.High,
		Documentation: "Send a request's records as a JSON array (batch.prefix, batch.suffix and batch.separator are then not used)."},
	{Name: batchPrefixConfig, Default: new(""), Importance: sdk.High, Documentation: "Text before the records of a request."},
	{Name: batchSuffixConfig, Default: new(""), Importance: sdk.High, Documentation: "Text after the records of a request."},
	{Name: batchSeparatorConfig, Default: new(","), Importance: sdk.High, Documentation: "Text between the records of a request."},
	{Name: maxRetriesConfig, Type: sdk.TypeInt, Default: new("10"), Importance: sdk.Medium,
		Documentation: "How many times a request is retried after a retriable status, a timeout or a connection error."},
	{Name: retryBackoffConfig, Type: sdk.TypeInt, Default: new("3000"), Importance: sdk.Medium,
		Documentation: "The wait before the first retry, doubled for each next one (up to 10 s)."},
	{Name: retryCodesConfig, Default: new("408,429,500-"), Importance: sdk.Medium,
		Documentation: "The response statuses that are retried: codes and ranges (500-599, or 500- for 500 and above), comma-separated."},
	{Name: connectTimeoutConfig, Type: sdk.TypeInt, Default: new("10000"), Importance: sdk.Low, Documentation: "The bound on connecting to the API (ms)."},
	{Name: requestTimeoutConfig, Type: sdk.TypeInt, Default: new("10000"), Importance: sdk.Low,
		Documentation: "The bound on one request, until its response body is read (ms); a request that takes longer is retried."},
	{Name: nullValuesConfig, Default: new("ignore"), Importance: sdk.Low,
		Documentation: "What a record with a null value does: ignore (skipped) or fail (rejected). delete is not supported."},
	{Name: proxyHostConfig, Default: new(""), Importance: sdk.Low, Documentation: "An HTTP proxy (not supported: must be empty)."},
}

// settings are a task's checked settings.
type settings struct {
	url            string
	method         string
	headers        [][2]string
	authorization  string // the Authorization header, "" for none
	json           bool   // request.body.format=json
	batchMax       int
	asArray        bool
	prefix, suffix string
	separator      string
	maxRetries     int
	backoff        time.Duration
	retryCodes     []codeRange
	connectTimeout time.Duration
	requestTimeout time.Duration
	failOnNull     bool
}

type codeRange struct{ lo, hi int }

func (s *settings) retriableStatus(code int) bool {
	for _, r := range s.retryCodes {
		if code >= r.lo && code <= r.hi {
			return true
		}
	}
	return false
}

// parseSettings reads cfg (defaults filled in) or says, per setting, what is wrong.
func parseSettings(cfg sdk.Config) (*settings, map[string][]string) {
	errs := map[string][]string{}
	fail := func(key, format string, args ...any) { errs[key] = append(errs[key], fmt.Sprintf(format, args...)) }
	s := &settings{
		method: strings.ToUpper(strings.TrimSpace(cfg.String(methodConfig, "POST"))), json: strings.EqualFold(strings.TrimSpace(cfg[bodyFormatConfig]), "json"),
		prefix: cfg[batchPrefixConfig], suffix: cfg[batchSuffixConfig], separator: cfg.String(batchSeparatorConfig, ","),
	}
	// The choices are checked here rather than by ConfigDef validators, so that a task checks them
	// too (the SDK checks a task's config for nothing but the plugin's own checks).
	oneOf := func(key string, values ...string) {
		v := cfg[key]
		for _, ok := range values {
			if strings.EqualFold(strings.TrimSpace(v), ok) {
				return
			}
		}
		fail(key, "Invalid value %s for configuration %s: String must be one of (case insensitive): %s", v, key, strings.Join(values, ", "))
	}
	oneOf(methodConfig, "POST", "PUT", "PATCH")
	oneOf(authTypeConfig, "NONE", "BASIC", "BEARER", "OAUTH2")
	oneOf(bodyFormatConfig, "string", "json")
	oneOf(nullValuesConfig, "ignore", "fail", "delete")
	raw := strings.TrimSpace(cfg[apiURLConfig])
	if raw == "" {
		fail(apiURLConfig, "Missing required configuration %q which has no default value.", apiURLConfig)
	} else if u, err := url.Parse(raw); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		fail(apiURLConfig, "Invalid value %s for configuration %s: not an http:// URL with a host", raw, apiURLConfig)
	} else if u.Scheme == "https" {
		fail(apiURLConfig, "Invalid value %s for configuration %s: https is not supported yet (the plugin has no trust store): use http://", raw, apiURLConfig)
	} else {
		s.url = raw
	}
	sep := cfg.String(headerSeparatorConfig, "|")
	if h := cfg[headersConfig]; strings.TrimSpace(h) != "" {
		if sep == "" {
			fail(headerSeparatorConfig, "%s must not be empty when %s is set", headerSeparatorConfig, headersConfig)
		} else {
			for _, item := range strings.Split(h, sep) {
				name, value, ok := strings.Cut(item, ":")
				if name = strings.TrimSpace(name); !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
					fail(headersConfig, "Invalid value for configuration %s: %q is not a header Name:Value (headers are separated by %q)", headersConfig, item, sep)
					continue
				}
				s.headers = append(s.headers, [2]string{name, strings.TrimSpace(value)})
			}
		}
	}
	switch strings.ToUpper(strings.TrimSpace(cfg.String(authTypeConfig, "NONE"))) {
	case "BASIC":
		if cfg[userConfig] == "" {
			fail(userConfig, "%s is required with %s=BASIC", userConfig, authTypeConfig)
		}
		s.authorization = "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg[userConfig]+":"+cfg[passwordConfig]))
	case "BEARER":
		if cfg[bearerTokenConfig] == "" {
			fail(bearerTokenConfig, "%s is required with %s=BEARER", bearerTokenConfig, authTypeConfig)
		}
		s.authorization = "Bearer " + cfg[bearerTokenConfig]
	case "OAUTH2":
		fail(authTypeConfig, "%s=OAUTH2 is not supported by this plugin: use BASIC, BEARER, or an Authorization header in %s", authTypeConfig, headersConfig)
	}
	ints := []struct {
		key string
		min int
		dst *int
	}{{batchMaxSizeConfig, 1, &s.batchMax}, {maxRetriesConfig, 0, &s.maxRetries}}
	for _, d := range ints {
		n, err := cfg.Int(d.key, 0)
		switch {
		case err != nil:
			fail(d.key, "%v", err)
		case n < d.min:
			fail(d.key, "Invalid value %d for configuration %s: Value must be at least %d", n, d.key, d.min)
		}
		*d.dst = n
	}
	durations := []struct {
		key string
		min int
		dst *time.Duration
	}{{retryBackoffConfig, 0, &s.backoff}, {connectTimeoutConfig, 1, &s.connectTimeout}, {requestTimeoutConfig, 1, &s.requestTimeout}}
	for _, d := range durations {
		ms, err := cfg.Int(d.key, 0)
		switch {
		case err != nil:
			fail(d.key, "%v", err)
		case ms < d.min:
			fail(d.key, "Invalid value %d for configuration %s: Value must be at least %d", ms, d.key, d.min)
		}
		*d.dst = time.Duration(ms) * time.Millisecond
	}
	s.asArray, _ = cfg.Bool(batchAsArrayConfig, false)
	codes, err := parseCodes(cfg.String(retryCodesConfig, ""))
	if err != nil {
		fail(retryCodesConfig, "Invalid value %s for configuration %s: %v", cfg[retryCodesConfig], retryCodesConfig, err)
	}
	s.retryCodes = codes
	switch strings.ToLower(strings.TrimSpace(cfg.String(nullValuesConfig, "ignore"))) {
	case "fail":
		s.failOnNull = true
	case "delete":
		fail(nullValuesConfig, "%s=delete is not supported by this plugin: use ignore or fail", nullValuesConfig)
	}
	if cfg[proxyHostConfig] != "" {
		fail(proxyHostConfig, "%s is not supported by this plugin: the worker's plugin.net.allow grants the API's address itself", proxyHostConfig)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// parseCodes reads "408,429,500-" or "500-599".
func parseCodes(v string) ([]codeRange, error) {
	var out []codeRange
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("%q is not a status code or a range of them", item)
		}
		b := a
		if isRange {
			b = 999
			if hi = strings.TrimSpace(hi); hi != "" {
				if b, err = strconv.Atoi(hi); err != nil || b < a {
					return nil, fmt.Errorf("%q is not a status code or a range of them", item)
				}
			}
		}
		out = append(out, codeRange{a, b})
	}
	return out, nil
}

func settingsError(errs map[string][]string) error {
	var msgs []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		msgs = append(msgs, strings.Join(errs[k], " "))
	}
	return fmt.Errorf("HttpSink: invalid configuration: %s", strings.Join(msgs, "; "))
}
