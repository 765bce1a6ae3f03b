package kafkaclient

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// Clients are a worker's client settings, checked once when it starts. The worker builds each
// task's clients from them (ForConnector).
type Clients struct {
	Internal *Client  // the worker's own clients: top-level connection keys
	Admin    *Client  // the worker's admin client: admin.* on top
	Warnings []string // every worker key with no franz-go equivalent, producer.* and consumer.* included
	Policy   Policy   // connector.client.config.override.policy

	worker config.Kafka
}

// NewClients checks a worker's client settings for every role, so that a bad producer.* or
// consumer.* value stops the worker at start rather than failing each task later.
func NewClients(k config.Kafka) (*Clients, error) {
	c := &Clients{worker: k}
	var errs []error
	var err error
	if c.Policy, err = ParsePolicy(k.OverridePolicy); err != nil {
		errs = append(errs, err)
	}
	if c.Internal, err = Build(ForWorker(k, Internal), Internal); err != nil {
		errs = append(errs, err)
	} else {
		c.Warnings = append(c.Warnings, c.Internal.Warnings...)
	}
	for _, role := range Roles {
		built, err := Build(ForWorker(k, role), role)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, w := range built.Warnings {
			// The inherited top-level keys were reported with the internal clients.
			if strings.HasPrefix(w, string(role)+".") {
				c.Warnings = append(c.Warnings, w)
			}
		}
		if role == Admin {
			c.Admin = built
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(distinct(errs)...)
	}
	return c, nil
}

// distinct flattens joined errors and drops repeats: a bad top-level key is inherited by several
// clients, and reported once.
func distinct(errs []error) []error {
	var out []error
	seen := map[string]bool{}
	var add func(err error)
	add = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				add(e)
			}
			return
		}
		if !seen[err.Error()] {
			seen[err.Error()] = true
			out = append(out, err)
		}
	}
	for _, e := range errs {
		add(e)
	}
	return out
}

// ForConnector returns the settings of a connector's client of the role: the worker's, then the
// connector's <role>.override.* keys, which the worker's policy must allow. Its Warnings are
// those about the connector's keys only (the worker's were reported at start).
func (c *Clients) ForConnector(connector map[string]string, role Role) (*Client, error) {
	if refused := c.Policy.Refusals(connector, role); len(refused) > 0 {
		var errs []error
		for k, msg := range refused {
			errs = append(errs, fmt.Errorf("%s: %s", k, msg))
		}
		return nil, errors.Join(errs...)
	}
	built, err := Build(ForWorker(c.worker, role).WithOverrides(connector, role), role)
	if err != nil {
		return nil, err
	}
	var own []string
	for _, w := range built.Warnings {
		if strings.HasPrefix(w, string(role)+".override.") {
			own = append(own, w)
		}
	}
	built.Warnings = own
	return built, nil
}

// OverrideErrors checks a connector's <role>.override.* keys as a create or validate request
// does: the keys the worker's policy refuses, then bad values, each by the key as written. An
// error that is not about one key goes to the first override key of its role.
func (c *Clients) OverrideErrors(connector map[string]string, role Role) map[string][]string {
	out := map[string][]string{}
	for k, msg := range c.Policy.Refusals(connector, role) {
		out[k] = append(out[k], msg)
	}
	if len(out) > 0 {
		return out
	}
	over := Overrides(connector, role)
	if len(over) == 0 {
		return out
	}
	_, err := Build(ForWorker(c.worker, role).WithOverrides(connector, role), role)
	if err == nil {
		return out
	}
	prefix := string(role) + ".override."
	first := ""
	for _, s := range over {
		if first == "" || s.Key < first {
			first = s.Key
		}
	}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *SettingError
		switch {
		case errors.As(e, &se) && strings.HasPrefix(se.Key, prefix):
			out[se.Key] = append(out[se.Key], se.Error())
		case errors.As(e, &se):
			// a worker key: checked at start
		default:
			out[first] = append(out[first], e.Error())
		}
	}
	return out
}
